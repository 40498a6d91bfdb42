//go:build unix

package autostart

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// The test binary doubles as a fake proxy-server (run through a symlink
// named proxy-server) when AUTOSTART_FAKE_SERVER is set.
func TestMain(m *testing.M) {
	if mode := os.Getenv("AUTOSTART_FAKE_SERVER"); mode != "" {
		os.Exit(fakeServer(mode))
	}
	os.Exit(proctest.RunChecked(m))
}

// fakeServer records its start in "starts" next to the database, then
// (mode "serve") answers /health on PROXY_HOST:PROXY_PORT until SIGTERM, or
// (mode "fail") exits at once with a message. AUTOSTART_FAKE_GATE names a
// file to wait for before serving: a server that is slow to start; with
// AUTOSTART_FAKE_BIND_FIRST it holds its port meanwhile, as proxy-server
// does, leaving connections unanswered.
func fakeServer(mode string) int {
	dir := filepath.Dir(os.Getenv("PROXY_DATABASE_PATH"))
	f, err := os.OpenFile(filepath.Join(dir, "starts"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 2
	}
	fmt.Fprintf(f, "%d %s\n", os.Getpid(), strings.Join(os.Args[1:], " "))
	f.Close()
	if mode == "fail" {
		fmt.Fprintln(os.Stderr, "fake proxy-server: cannot open the database")
		return 3
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var ln net.Listener
	listen := func() error {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(os.Getenv("PROXY_HOST"), os.Getenv("PROXY_PORT")))
		return err
	}
	if os.Getenv("AUTOSTART_FAKE_BIND_FIRST") != "" {
		if err := listen(); err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			return 4
		}
	}
	if gate := os.Getenv("AUTOSTART_FAKE_GATE"); gate != "" {
		for {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return 0
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if ln == nil {
		if err := listen(); err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			return 4
		}
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"status":"ok","checks":{},"version":"fake"}`)
	})}
	go srv.Serve(ln)
	<-ctx.Done()
	srv.Close()
	return 0
}

func TestLoopback(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:34501", true},
		{"http://localhost:34501", true},
		{"http://LOCALHOST", true},
		{"http://[::1]:34501", true},
		{"http://127.0.0.2:1", true},
		{"https://127.0.0.1:34501", false}, // proxy-server does not serve TLS itself
		{"http://10.0.0.5:34501", false},
		{"http://0.0.0.0:34501", false},
		{"http://proxy.example.com", false},
		{"http://localhost.example.com", false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := Loopback(u); got != tc.want {
				t.Errorf("Loopback(%s) = %v, want %v", tc.url, got, tc.want)
			}
		})
	}
	if _, err := New(Config{URL: "http://10.0.0.5:34501", DatabasePath: "p.db"}); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("New with a remote URL = %v, want ErrNotLoopback", err)
	}
}

func TestFindServer(t *testing.T) {
	exe := func(path string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	exe(filepath.Join(bin, "mcp-bridge"))
	next := exe(filepath.Join(bin, "proxy-server"))
	// An installed bridge that is a symlink into the build directory.
	links := filepath.Join(root, "links")
	os.MkdirAll(links, 0o755)
	if err := os.Symlink(filepath.Join(bin, "mcp-bridge"), filepath.Join(links, "mcp-bridge")); err != nil {
		t.Fatal(err)
	}
	lonely := exe(filepath.Join(root, "lonely", "mcp-bridge"))
	onPath := func(string) (string, error) { return "/usr/local/bin/proxy-server", nil }
	nowhere := func(string) (string, error) { return "", errors.New("not found") }

	tests := []struct {
		name, self string
		look       func(string) (string, error)
		want       string
	}{
		{"next to the bridge", filepath.Join(bin, "mcp-bridge"), nowhere, next},
		{"next to the symlink's target", filepath.Join(links, "mcp-bridge"), nowhere, next},
		{"next to it wins over PATH", filepath.Join(bin, "mcp-bridge"), onPath, next},
		{"on PATH", lonely, onPath, "/usr/local/bin/proxy-server"},
		{"unknown executable, on PATH", "", onPath, "/usr/local/bin/proxy-server"},
		{"nowhere", lonely, nowhere, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindServer(tc.self, tc.look)
			if tc.want == "" {
				if err == nil {
					t.Errorf("FindServer = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("FindServer = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestServerEnv(t *testing.T) {
	tests := []struct {
		name, url, token string
		base             []string
		want             []string
	}{
		{"address and database from the bridge", "http://127.0.0.1:4000", "",
			[]string{"PATH=/bin", "PROXY_PORT=34501", "PROXY_HOST=0.0.0.0", "PROXY_WARM_POOL=0"},
			[]string{"PATH=/bin", "PROXY_WARM_POOL=0", "PROXY_HOST=127.0.0.1", "PROXY_PORT=4000", "PROXY_DATABASE_PATH=/data/p.db"}},
		{"default http port", "http://localhost", "",
			nil,
			[]string{"PROXY_HOST=localhost", "PROXY_PORT=80", "PROXY_DATABASE_PATH=/data/p.db"}},
		{"the bridge's token protects the server", "http://[::1]:4000", "tk",
			nil,
			[]string{"PROXY_HOST=::1", "PROXY_PORT=4000", "PROXY_DATABASE_PATH=/data/p.db", "PROXY_AUTH_TOKEN=tk"}},
		{"an explicit server token stays", "http://127.0.0.1:4000", "tk",
			[]string{"PROXY_AUTH_TOKEN=other"},
			[]string{"PROXY_AUTH_TOKEN=other", "PROXY_HOST=127.0.0.1", "PROXY_PORT=4000", "PROXY_DATABASE_PATH=/data/p.db"}},
		{"a client token is not made the operator's", "http://127.0.0.1:4000", "tk",
			[]string{"PROXY_CLIENT_TOKENS_FILE=/etc/tokens"},
			[]string{"PROXY_CLIENT_TOKENS_FILE=/etc/tokens", "PROXY_HOST=127.0.0.1", "PROXY_PORT=4000", "PROXY_DATABASE_PATH=/data/p.db"}},
		{"an empty client tokens file setting is none", "http://127.0.0.1:4000", "tk",
			[]string{"PROXY_CLIENT_TOKENS_FILE="},
			[]string{"PROXY_CLIENT_TOKENS_FILE=", "PROXY_HOST=127.0.0.1", "PROXY_PORT=4000", "PROXY_DATABASE_PATH=/data/p.db", "PROXY_AUTH_TOKEN=tk"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{URL: tc.url, DatabasePath: "/data/p.db", Env: tc.base, Token: tc.token})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.serverEnv(); !slices.Equal(got, tc.want) {
				t.Errorf("serverEnv = %q\nwant %q", got, tc.want)
			}
			if s.DataDir() != "/data" {
				t.Errorf("DataDir = %q", s.DataDir())
			}
		})
	}
}

// fixture is a data directory, a free port and a fake proxy-server.
type fixture struct {
	dir, port, exe string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: t.TempDir(), port: e2etest.FreePort(t)}
	f.exe = filepath.Join(t.TempDir(), ServerName)
	if err := os.Symlink(self, f.exe); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.stopServers(t) })
	return f
}

func (f *fixture) starter(t *testing.T, mode string, extraEnv ...string) *Starter {
	t.Helper()
	env := append(os.Environ(), "AUTOSTART_FAKE_SERVER="+mode)
	s, err := New(Config{
		URL:          "http://127.0.0.1:" + f.port,
		DatabasePath: filepath.Join(f.dir, "proxy.db"),
		Executable:   f.exe,
		Env:          append(env, extraEnv...),
		StartTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// starts lists the pids the fake server recorded.
func (f *fixture) starts(t *testing.T) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "starts"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		pid, _ := strconv.Atoi(strings.Fields(line)[0])
		pids = append(pids, pid)
	}
	return pids
}

// stopServers SIGTERMs every fake server started and waits for it to go.
func (f *fixture) stopServers(t *testing.T) {
	for _, pid := range f.starts(t) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if left := proctest.WaitGone(10*time.Second, func() []proctest.Proc {
			if p, ok := proctest.Stat(pid); ok {
				return []proctest.Proc{p}
			}
			return nil
		}); len(left) > 0 {
			t.Errorf("fake server %v did not stop", left)
			proctest.KillAll(left)
		}
	}
}

// waitStarts is starts once it lists n pids, or after 10s.
func (f *fixture) waitStarts(t *testing.T, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pids := f.starts(t); len(pids) >= n || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestEnsureStartsExactlyOne(t *testing.T) {
	f := newFixture(t)
	const bridges = 4
	var wg sync.WaitGroup
	errs := make([]error, bridges)
	for i := range bridges {
		// One Starter each, as separate bridge processes would have: the
		// flock is per open file, so they exclude each other in-process too.
		s := f.starter(t, "serve")
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Ensure(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Ensure %d: %v", i, err)
		}
	}
	pids := f.starts(t)
	if len(pids) != 1 {
		t.Fatalf("%d servers started (%v), want exactly 1", len(pids), pids)
	}
	if p, ok := proctest.Stat(pids[0]); !ok || p.Comm != ServerName {
		t.Errorf("started process = %+v (alive %v), want a running %s", p, ok, ServerName)
	} else if p.PGID != p.PID {
		t.Errorf("server %v is not detached in a session and group of its own", p)
	}
	if b, err := os.ReadFile(filepath.Join(f.dir, PIDFile)); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pids[0]) {
		t.Errorf("pid file = %q, %v; want %d", b, err, pids[0])
	}
	logText, _ := os.ReadFile(filepath.Join(f.dir, LogFile))
	if n := strings.Count(string(logText), "starts "+f.exe+" serve"); n != 1 {
		t.Errorf("log file names %d starts, want 1:\n%s", n, logText)
	}
	// Once it answers, Ensure starts nothing more.
	if err := f.starter(t, "serve").Ensure(context.Background()); err != nil {
		t.Errorf("Ensure with a server up: %v", err)
	}
	if got := f.starts(t); len(got) != 1 {
		t.Errorf("servers after a second Ensure: %v", got)
	}
}

func TestEnsureLeavesAnsweringServerAlone(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:"+f.port)
	if err != nil {
		t.Fatal(err)
	}
	// Any HTTP answer means a server is there, even an unhealthy one.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	if err := f.starter(t, "serve").Ensure(context.Background()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if pids := f.starts(t); len(pids) != 0 {
		t.Errorf("started %v although a server answered", pids)
	}
}

func TestEnsureReportsServerThatExits(t *testing.T) {
	f := newFixture(t)
	err := f.starter(t, "fail").Ensure(context.Background())
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "cannot open the database") {
		t.Fatalf("Ensure with a failing server = %v; want ErrExited and the log's last lines", err)
	}
	// The pid file would send a user to kill, or the next bridge to wait
	// for, a process that is gone.
	if _, err := os.Stat(filepath.Join(f.dir, PIDFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the pid file of the exited server is still there (%v)", err)
	}
}

// TestEnsureWaitsForSlowServer: a server that has not answered in time is
// left running, and the next Ensure waits for it instead of starting a
// second one, whether the port is still free or the server already holds
// it without answering.
func TestEnsureWaitsForSlowServer(t *testing.T) {
	for _, bindFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("bind first %v", bindFirst), func(t *testing.T) {
			f := newFixture(t)
			gate := filepath.Join(f.dir, "gate")
			env := []string{"AUTOSTART_FAKE_GATE=" + gate}
			if bindFirst {
				env = append(env, "AUTOSTART_FAKE_BIND_FIRST=1")
			}
			first := f.starter(t, "serve", env...)
			first.timeout = 300 * time.Millisecond
			first.probe.Timeout = 100 * time.Millisecond
			if err := first.Ensure(context.Background()); err == nil || !strings.Contains(err.Error(), "did not answer") {
				t.Fatalf("first Ensure = %v; want it to give up waiting", err)
			}
			// The server records its start itself, which a slow machine may
			// not have got to when Ensure gives up.
			if pids := f.waitStarts(t, 1); len(pids) != 1 || !running(pids[0], ServerName) {
				t.Fatalf("after the first Ensure: started %v, want one still running", pids)
			}
			second := f.starter(t, "serve")
			second.probe.Timeout = 100 * time.Millisecond
			clk := clocktest.New()
			second.clock = clk
			done := make(chan error, 1)
			go func() { done <- second.Ensure(context.Background()) }()
			// Waiting for its first look again: it found the port taken
			// and unanswered, when it is, and no server of its own started.
			clk.WaitForTimer(t, 50*time.Millisecond)
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			waitAnswering(t, second)
			clk.Advance(50 * time.Millisecond)
			if err := <-done; err != nil {
				t.Fatalf("second Ensure: %v", err)
			}
			if pids := f.starts(t); len(pids) != 1 {
				t.Errorf("started %v, want still exactly one server", pids)
			}
		})
	}
}

// waitAnswering waits for the server s would start to answer /health.
func waitAnswering(t *testing.T, s *Starter) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.check(t.Context()) != answering {
		if time.Now().After(deadline) {
			t.Fatal("the server does not answer after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestEnsureHonoursContext(t *testing.T) {
	f := newFixture(t)
	unlock, err := lock(context.Background(), filepath.Join(f.dir, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.starter(t, "serve").Ensure(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Ensure while another holds the lock, ctx cancelled = %v; want context.Canceled", err)
	}
	if pids := f.starts(t); len(pids) != 0 {
		t.Errorf("started %v without the lock", pids)
	}
}

// TestEnsureDataDirNotWritable: a data directory that cannot be made or
// written is ErrDataDir at once, naming the directory, and nothing starts.
func TestEnsureDataDirNotWritable(t *testing.T) {
	tests := []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"a file where the directory goes", func(t *testing.T) string {
			file := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(file, "data")
		}},
		{"read-only directory", func(t *testing.T) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes into a read-only directory")
			}
			dir := t.TempDir()
			if err := os.Chmod(dir, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
			return dir
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dir := tc.dir(t)
			s, err := New(Config{
				URL:          "http://127.0.0.1:" + f.port,
				DatabasePath: filepath.Join(dir, "proxy.db"),
				Executable:   f.exe,
				Env:          append(os.Environ(), "AUTOSTART_FAKE_SERVER=serve"),
			})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Ensure(context.Background())
			if !errors.Is(err, ErrDataDir) || !strings.Contains(err.Error(), dir) {
				t.Errorf("Ensure = %v, want ErrDataDir naming %s", err, dir)
			}
			for _, p := range proctest.Descendants(os.Getpid()) {
				if p.Comm == ServerName {
					t.Errorf("started %v", p)
				}
			}
		})
	}
}
