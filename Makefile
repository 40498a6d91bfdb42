# playwright-mcp-proxy. `make run` and `make test` work on a fresh machine:
# scripts/ensure-deps.sh installs what is missing first.
SHELL := /bin/bash
GO ?= go
PREFIX ?= /usr/local
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
PKG := github.com/playwright-mcp-proxy/playwright-mcp-proxy
LDFLAGS := -X $(PKG)/internal/buildinfo.Version=$(VERSION) -X $(PKG)/internal/buildinfo.ProjectRoot=$(CURDIR)
TEST_TIMEOUT ?= 25m
# The benchmark tool is a module of its own (the product's ./... does not
# build it); vet and test cover it too.
BENCHDIR := tools/bench

.PHONY: all deps build run install test test-short vet cross fmt fuzz clean

all: build

deps:
	@./scripts/ensure-deps.sh

# Static binaries, as the Dockerfile builds them: nothing here needs cgo
# (SQLite is modernc's pure-Go port), and without it the binaries run on any
# Linux and the server carries no glibc malloc arenas or pthread stacks
# beside Go's own memory (docs/BENCHMARKS.md §6).
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o bin/ ./cmd/proxy-server ./cmd/mcp-bridge

run: deps build
	./bin/proxy-server serve

install: deps build
	@dest="$(PREFIX)/bin"; \
	if [ ! -w "$$dest" ]; then dest="$$HOME/.local/bin"; mkdir -p "$$dest"; fi; \
	install -m 0755 bin/proxy-server bin/mcp-bridge "$$dest"/; \
	echo "installed proxy-server and mcp-bridge in $$dest"; \
	case ":$$PATH:" in *":$$dest:"*) ;; *) echo "note: add $$dest to PATH";; esac

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd $(BENCHDIR) && $(GO) vet ./...

# The binaries also ship for Windows and macOS: there they are built and
# vetted (test files included), never run (README "Platforms"). The
# benchmark tool drives processes by Unix process group, so it is built for
# macOS only.
CROSS ?= windows/amd64 darwin/arm64 darwin/amd64
cross:
	@set -e; for p in $(CROSS); do \
		os=$${p%/*}; arch=$${p#*/}; echo "cross $$os/$$arch"; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build ./...; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) vet ./...; \
		if [ "$$os" = darwin ]; then \
			(cd $(BENCHDIR) && GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build ./... && GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) vet ./...); \
		fi; \
	done

# The whole suite, real @playwright/mcp and headless Chromium included, then
# a short fuzz run of each fuzz target.
test: deps vet cross
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd $(BENCHDIR) && $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(GO) test -count=1 -tags memory.counters -run '^TestSQLiteAllocatorGauges$$' ./internal/metrics
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME)

# Fuzz targets: the upstream response parser and the API's request decoding.
# Seeds live in testdata/ (and testdata/fuzz/); FUZZTIME=10m for a long run.
# The default is a count of executions, not a duration: with a duration,
# go1.26's fuzz coordinator can fail a run that found nothing ("context
# deadline exceeded", no input written) when a worker is mid-call as the
# time runs out (golang/go#75804, fixed in go1.27).
FUZZTIME ?= 20000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/answer
	$(GO) test -run '^$$' -fuzz '^FuzzRequestBodies$$' -fuzztime $(FUZZTIME) ./internal/api

# Unit tests only (integration tests skip under -short).
test-short:
	$(GO) test -short -count=1 ./...
	cd $(BENCHDIR) && $(GO) test -short -count=1 ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin

# Benchmarks against the real proxy-server and headless Chromium, side by
# side with a plain @playwright/mcp (docs/BENCHMARKS.md). `make bench` runs
# every scenario but the soak (sessions, concurrency, overhead, bytes, tokens,
# then store) and draws the charts into bin/; `make soak` is the 30-minute
# soak. BENCH picks one scenario instead (sessions, overhead, bytes, tokens,
# concurrency, store, soak, idle); BENCH_ARGS passes flags, e.g.
# make bench BENCH=concurrency BENCH_ARGS='-levels 1,10 -duration 30s'.
.PHONY: bench soak bin/bench
BENCH ?=
BENCH_ARGS ?=
# Built like the binaries it measures: its relays (overhead's side D) are
# the floor of their path only if they are linked the same way. It runs from
# here: the project root is its default -root.
bin/bench:
	cd $(BENCHDIR) && CGO_ENABLED=0 $(GO) build -o $(CURDIR)/bin/bench .
BENCHRUN = bin/bench
bench: deps build bin/bench
ifeq ($(BENCH),)
	$(BENCHRUN) all -json bin/bench.json $(BENCH_ARGS)
	$(BENCHRUN) store -json bin/store.json
	$(BENCHRUN) chart -concurrency bin/bench.json -tokens bin/bench.json -out bin
else
	$(BENCHRUN) $(BENCH) -json bin/bench-$(BENCH).json $(BENCH_ARGS)
endif
soak: deps build bin/bench
	$(BENCHRUN) soak -json bin/soak.json $(BENCH_ARGS)
	$(BENCHRUN) chart -concurrency bin/bench.json -soak bin/soak.json -out bin
