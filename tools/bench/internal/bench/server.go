package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// ServerConfig says how to start one proxy-server child.
type ServerConfig struct {
	// Binary is the proxy-server executable (bin/proxy-server).
	Binary string
	// Dir is the working directory (the project root, where node_modules is).
	Dir string
	// Env holds PROXY_* overrides on top of the inherited environment.
	Env map[string]string
	// StartTimeout bounds the wait for "proxy-server listening".
	StartTimeout time.Duration
	// StopTimeout bounds the wait for exit after SIGTERM; then the group is
	// killed.
	StopTimeout time.Duration
	// KeepFiles keeps the temp directory (database, server log).
	KeepFiles bool
}

// Server is a running proxy-server child process.
type Server struct {
	URL     string
	PID     int
	LogPath string
	DBPath  string

	cfg  ServerConfig
	log  *slog.Logger
	proc *proctest.Server
	dir  string

	mu   sync.Mutex
	seen map[procKey]Proc // every descendant seen while it ran

	stopTracking context.CancelFunc
	trackDone    chan struct{}
	stopOnce     sync.Once
	stopReport   StopReport
}

// StopReport says how the server stopped and what it left behind.
type StopReport struct {
	Signal  string  `json:"signal"`
	Exit    string  `json:"exit"`
	TookMS  float64 `json:"took_ms"`
	Killed  bool    `json:"killed_after_timeout"`
	Tracked int     `json:"descendants_seen"`
	// TrackedByKind counts the descendants seen, by kind.
	TrackedByKind map[string]int `json:"descendants_seen_by_kind"`
	// Leftover lists processes still alive after the server exited; they
	// were then killed by pid.
	Leftover []string `json:"leftover"`
	// LogProblems are the first WARN/ERROR lines of the server log.
	LogProblems []string `json:"log_problems"`
	// LogProblemCount counts all WARN/ERROR lines.
	LogProblemCount int    `json:"log_problem_count"`
	LogPath         string `json:"log_path,omitempty"`
}

// Clean reports whether nothing was left behind.
func (r StopReport) Clean() bool { return len(r.Leftover) == 0 && !r.Killed }

// Summary is the one line the benchmark prints about the cleanup.
func (r StopReport) Summary() string {
	var kinds []string
	for k, n := range r.TrackedByKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	s := fmt.Sprintf("proxy-server stopped with %s in %.0f ms (exit: %s); %d descendant processes seen during the run (%s); ",
		r.Signal, r.TookMS, r.Exit, r.Tracked, strings.Join(kinds, ", "))
	if r.Killed {
		s += "it did NOT exit in time and its process group was killed; "
	}
	if len(r.Leftover) == 0 {
		return s + "no node or chromium process left running"
	}
	return s + fmt.Sprintf("LEFT RUNNING (then killed by pid): %s", strings.Join(r.Leftover, " "))
}

// StartServer starts proxy-server serve on 127.0.0.1, port 0, with its own
// temp database and log, and waits until it listens. The caller must call
// Stop (also on error paths); StartServer stops the child itself when it
// fails.
func StartServer(ctx context.Context, log *slog.Logger, cfg ServerConfig) (*Server, error) {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 90 * time.Second
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = 30 * time.Second
	}
	dir, err := os.MkdirTemp("", "pwproxy-bench-*")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	s := &Server{
		cfg: cfg, log: log, dir: dir,
		LogPath: filepath.Join(dir, "proxy-server.log"),
		DBPath:  filepath.Join(dir, "proxy.db"),
		seen:    map[procKey]Proc{},
	}
	logf, err := os.Create(s.LogPath)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("server log: %w", err)
	}
	defer logf.Close() // the child holds its own copy

	s.proc, err = proctest.StartServer(proctest.ServerConfig{
		Binary: cfg.Binary, Args: []string{"-host", "127.0.0.1", "-port", "0", "-db", s.DBPath},
		Dir: cfg.Dir, Env: serverEnv(os.Environ(), cfg.Env), Log: logf,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.PID = s.proc.PID
	trackCtx, cancel := context.WithCancel(context.Background())
	s.stopTracking, s.trackDone = cancel, make(chan struct{})
	go s.track(trackCtx)
	log.Info("proxy-server started", "pid", s.PID, "log", s.LogPath, "env", cfg.Env)

	addr, err := s.proc.WaitListening(ctx, cfg.StartTimeout)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w; log:\n%s", err, tailFile(s.LogPath, 20))
	}
	if err != nil {
		rep := s.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w (%s)", err, rep.Summary())
	}
	if err := loopbackOnly(addr); err != nil {
		s.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	s.URL = "http://" + addr
	log.Info("proxy-server listening", "url", s.URL)
	return s, nil
}

// serverEnv is env with overrides applied and the log format pinned to text
// (the listen line is parsed from it).
func serverEnv(env []string, over map[string]string) []string {
	over2 := map[string]string{"PROXY_LOG_FORMAT": "text"}
	for k, v := range over {
		over2[k] = v
	}
	return childEnv(env, over2)
}

func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("proxy-server listens on %q, not loopback: refusing to benchmark it", addr)
	}
	return nil
}

// track records every descendant of the server once a second, so the leak
// check after the stop knows what to look for.
func (s *Server) track(ctx context.Context) {
	defer close(s.trackDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		s.Track()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Track records the server's current descendants, and the orphans of its
// tree that re-parented to this process (Chromium's crashpad handlers
// daemonise that way): the benchmark starts nothing else while a server runs.
func (s *Server) Track() {
	self := os.Getpid()
	tree := processTree(self)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range tree {
		if p.PID != s.PID && p.PID != self {
			if _, ok := s.seen[keyOf(p)]; !ok {
				p.Comm = procKind(p)
				s.seen[keyOf(p)] = p
			}
		}
	}
}

// Memory samples the RSS of the server, all its descendants and the orphans
// of its tree (see Track).
func (s *Server) Memory(withPSS bool) MemSample {
	s.Track()
	self := os.Getpid()
	var procs []Proc
	for _, p := range processTree(self) {
		if p.PID != self {
			procs = append(procs, p)
		}
	}
	return SampleMemory(procs, withPSS)
}

// Exited reports whether the server process has exited.
func (s *Server) Exited() bool { return s.proc.Exited() }

// Stop sends SIGTERM, waits for the exit (killing the process group after
// StopTimeout), reaps it, then checks that every descendant seen during the
// run is gone, killing by pid any that is not. It is safe to call twice.
func (s *Server) Stop(ctx context.Context) StopReport {
	s.stopOnce.Do(func() { s.stopReport = s.stop(ctx) })
	return s.stopReport
}

func (s *Server) stop(ctx context.Context) StopReport {
	s.Track()
	rep := StopReport{Signal: "SIGTERM", LogPath: s.LogPath}
	start := time.Now()
	if rep.Killed = s.proc.Stop(s.cfg.StopTimeout); rep.Killed {
		s.log.Error("proxy-server did not exit after SIGTERM: its process group was killed", "pid", s.PID, "waited", s.cfg.StopTimeout)
	}
	rep.TookMS = ms(time.Since(start))
	rep.Exit = "0"
	if err := s.proc.Err(); err != nil {
		rep.Exit = err.Error()
	}
	s.stopTracking()
	<-s.trackDone

	s.mu.Lock()
	seen := make([]Proc, 0, len(s.seen))
	for _, p := range s.seen {
		seen = append(seen, p)
	}
	s.mu.Unlock()
	rep.Tracked = len(seen)
	rep.TrackedByKind = map[string]int{}
	for _, p := range seen {
		rep.TrackedByKind[p.Comm]++
	}

	// Everything the server started must go away on its own.
	deadline := time.Now().Add(10 * time.Second)
	var left []Proc
	for {
		proctest.ReapOrphans()
		left = left[:0]
		for _, p := range seen {
			if alive(p) {
				left = append(left, p)
			}
		}
		// Orphans re-parented to us (we are a child subreaper).
		for _, p := range processTree(os.Getpid()) {
			if p.PID != os.Getpid() && p.PPID == os.Getpid() {
				if _, ok := s.seen[keyOf(p)]; !ok {
					p.Comm = procKind(p)
					left = append(left, p)
				}
			}
		}
		if len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range left {
		rep.Leftover = append(rep.Leftover, procName(p))
		if alive(p) {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	if len(left) > 0 {
		time.Sleep(200 * time.Millisecond)
		proctest.ReapOrphans()
	}
	rep.LogProblems, rep.LogProblemCount = logProblems(s.LogPath, 8)
	if !s.cfg.KeepFiles {
		os.RemoveAll(s.dir)
		rep.LogPath = ""
	}
	s.log.Info("cleanup", "result", rep.Summary())
	return rep
}

// settle waits (up to max) until the server's process tree has at most
// procs processes: closed sessions' workers and renderers take a while to
// go on a loaded machine, and a baseline taken before they are gone is wrong.
func (s *Server) settle(ctx context.Context, procs int, max time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for {
		if len(processTree(s.PID)) <= procs {
			return time.Since(start), true, nil
		}
		if time.Since(start) > max {
			return time.Since(start), false, nil
		}
		if err := sleepCtx(ctx, time.Second); err != nil {
			return time.Since(start), false, err
		}
	}
}

// DBBytes is the size of the database, its WAL and shared memory file.
func (s *Server) DBBytes() int64 {
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(s.DBPath + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// LogProblems returns the first max WARN/ERROR lines of the server log so far
// and how many there are in all.
func (s *Server) LogProblems(max int) ([]string, int) { return logProblems(s.LogPath, max) }

func logProblems(path string, max int) ([]string, int) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	var out []string
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			n++
			if len(out) < max {
				if len(line) > 400 {
					line = line[:400] + "…"
				}
				out = append(out, line)
			}
		}
	}
	return out, n
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// checkURL refuses anything but a loopback http URL.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return loopbackOnly(u.Host)
}

// startServer is StartServer for a scenario: stop, which the scenario
// defers, stops the server and writes its cleanup report and whether the
// run was interrupted.
func startServer(ctx context.Context, log *slog.Logger, scfg ServerConfig, cleanup *StopReport, interrupted *bool) (*Server, func(), error) {
	srv, err := StartServer(ctx, log, scfg)
	if err != nil {
		return nil, nil, err
	}
	return srv, func() {
		*cleanup = srv.Stop(context.WithoutCancel(ctx))
		*interrupted = ctx.Err() != nil
	}, nil
}
