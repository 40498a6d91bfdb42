package main

import (
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
)

// TestFill: every scenario that starts a proxy-server gets the common
// flags' server, and the stdio ones the bridge and call timeout, through
// the configuration fields fill sets by name: a field renamed in a scenario
// would otherwise stay zero without a word.
func TestFill(t *testing.T) {
	e := &env{server: bench.ServerConfig{Binary: "/root/bin/proxy-server", Dir: "/root"}, timeout: time.Minute, bridge: "/root/bin/mcp-bridge"}
	for _, c := range commands {
		if c.setup == nil || c.local {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := c.setup(flag.NewFlagSet(c.name, flag.ContinueOnError))
			v := reflect.ValueOf(cfg).Elem()
			e.fill(v)
			got := map[string]int{}
			var walk func(v reflect.Value)
			walk = func(v reflect.Value) {
				for i := range v.NumField() {
					f := v.Field(i)
					switch {
					case f.Type() == reflect.TypeOf(e.server) && cmp.Equal(f.Interface(), e.server):
						got["server"]++
					case f.Kind() == reflect.Struct && f.CanInterface():
						walk(f)
					case v.Type().Field(i).Name == "Bridge" && f.Interface() == e.bridge:
						got["bridge"]++
					}
				}
			}
			walk(v)
			want := map[string]int{"server": 1}
			if c.stdio {
				want["bridge"] = 1
			}
			if c.name == "all" {
				want = map[string]int{"server": 5, "bridge": 3}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fields filled (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailed: a stop that left a process behind fails the run wherever it
// sits in the report (a server, a stdio child), and so do store ingest
// errors; a clean report does not fail.
func TestFailed(t *testing.T) {
	leak := bench.StopReport{Signal: "SIGTERM", Leftover: []string{"42(node)"}}
	tests := []struct {
		name string
		rep  bench.Report
		want string
	}{
		{"clean", bench.Report{Sessions: &bench.SessionsResult{Runs: []bench.SessionsRun{{Cleanup: bench.StopReport{Signal: "SIGTERM"}}}}}, ""},
		{"empty", bench.Report{}, ""},
		{"sessions run", bench.Report{Sessions: &bench.SessionsResult{Runs: []bench.SessionsRun{{Cleanup: leak}}}}, "42(node)"},
		{"concurrency run", bench.Report{Concurrency: &bench.ConcurrencyResult{Cleanup: leak}}, "42(node)"},
		{"nodes run", bench.Report{Nodes: &bench.NodesResult{Runs: []*bench.ConcurrencyResult{nil, {Cleanup: leak}}}}, "42(node)"},
		{"killed", bench.Report{Idle: &bench.IdleResult{Cleanup: bench.StopReport{Signal: "SIGTERM", Killed: true}}}, "NOT exit in time"},
		{"stdio child", bench.Report{Bytes: &bench.BytesResult{TokensResult: bench.TokensResult{Stops: []bench.StdioStopReport{{Leftover: []string{"7(chromium)"}}}}}}, "7(chromium)"},
		{"store ingest", bench.Report{Store: &bench.StoreResult{Ingest: []bench.IngestRun{{Name: "writers only", ErrorCount: 3, Busy: 1}}}}, "3 errors, 1 of them SQLITE_BUSY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := failed(&tt.rep)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("failed() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("failed() = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}
