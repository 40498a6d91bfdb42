package bench

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// ServerConfig says how to start one proxy-server child: Binary in Dir
// (the project root, where node_modules is), with Env's PROXY_* overrides
// on top of the inherited environment.
type ServerConfig struct {
	Binary, Dir string
	Env         map[string]string
	// Beside are processes this benchmark started next to the server (the
	// browser nodes): neither they, their descendants nor anything else
	// that runs when the server starts are counted as the server's.
	Beside []int
}

type Server struct {
	URL, LogPath, DBPath string
	PID                  int

	log  *slog.Logger
	proc *proctest.Server
	dir  string

	mu     sync.Mutex
	seen   map[procKey]Proc // every descendant seen while it ran
	beside []int            // ServerConfig.Beside
	before map[procKey]bool // this process's descendants when the server started

	stopTracking context.CancelFunc
	trackDone    chan struct{}
	stopOnce     sync.Once
	stopReport   StopReport
}

type StopReport struct {
	Signal  string  `json:"signal"`
	Exit    string  `json:"exit"`
	TookMS  float64 `json:"took_ms"`
	Killed  bool    `json:"killed_after_timeout"`
	Tracked int     `json:"descendants_seen"`
	// Leftover lists processes still alive after the server exited; they
	// were then killed by pid.
	Leftover []string `json:"leftover"`
}

func (r StopReport) Clean() bool { return len(r.Leftover) == 0 && !r.Killed }

func (r StopReport) Summary() string {
	s := fmt.Sprintf("proxy-server stopped with %s in %.0f ms (exit: %s); %d descendant processes seen during the run; ", r.Signal, r.TookMS, r.Exit, r.Tracked)
	if r.Killed {
		s += "it did NOT exit in time and its process group was killed; "
	}
	if len(r.Leftover) == 0 {
		return s + "no node or chromium process left running"
	}
	return s + "LEFT RUNNING (then killed by pid): " + strings.Join(r.Leftover, " ")
}

// StartServer starts proxy-server serve on 127.0.0.1, port 0, with its own
// temp database and log, and waits until it listens. The caller must call
// Stop; StartServer stops the child itself when it fails.
func StartServer(ctx context.Context, log *slog.Logger, cfg ServerConfig) (*Server, error) {
	dir, err := os.MkdirTemp("", "pwproxy-bench-*")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	s := &Server{log: log, dir: dir, LogPath: filepath.Join(dir, "proxy-server.log"), DBPath: filepath.Join(dir, "proxy.db"), seen: map[procKey]Proc{}, beside: cfg.Beside, before: map[procKey]bool{}}
	if len(cfg.Beside) > 0 {
		for _, p := range proctest.Descendants(os.Getpid()) {
			s.before[keyOf(p)] = true
		}
	}
	logf, err := os.Create(s.LogPath)
	if err == nil {
		defer logf.Close()                                   // the child holds its own copy
		env := map[string]string{"PROXY_LOG_FORMAT": "text"} // the listen line is parsed from it
		maps.Copy(env, cfg.Env)
		s.proc, err = proctest.StartServer(proctest.ServerConfig{
			Binary: cfg.Binary, Args: []string{"-host", "127.0.0.1", "-port", "0", "-db", s.DBPath},
			Dir: cfg.Dir, Env: childEnv(os.Environ(), env), Log: logf,
		})
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting proxy-server: %w", err)
	}
	s.PID = s.proc.PID
	trackCtx, cancel := context.WithCancel(context.Background())
	s.stopTracking, s.trackDone = cancel, make(chan struct{})
	go s.track(trackCtx)
	addr, err := s.proc.WaitListening(ctx, 90*time.Second)
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w; log:\n%s", err, tailFile(s.LogPath, 20))
	}
	if err == nil {
		err = loopbackOnly(addr)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, s.Stop(context.WithoutCancel(ctx)).Summary())
	}
	s.URL = "http://" + addr
	log.Info("proxy-server listening", "url", s.URL, "pid", s.PID, "env", cfg.Env)
	return s, nil
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

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return loopbackOnly(u.Host)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.tree() {
		if _, ok := s.seen[keyOf(p)]; !ok && p.PID != s.PID {
			p.Comm = procKind(p)
			s.seen[keyOf(p)] = p
		}
	}
}

// addBeside adds a process started after the server to ServerConfig.Beside.
func (s *Server) addBeside(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beside = append(s.beside, pid)
}

func (s *Server) tree() []Proc {
	// The nodes' trees are theirs, and so is what ran before the server
	// started: their Chromium's crashpad handlers leave their trees
	// (setsid) and re-parent to this process.
	skip := map[procKey]bool{}
	for _, pid := range s.beside {
		for _, p := range processTree(pid) {
			skip[keyOf(p)] = true
		}
	}
	var tree []Proc
	for _, p := range proctest.Descendants(os.Getpid()) {
		if !skip[keyOf(p)] && !s.before[keyOf(p)] {
			tree = append(tree, p)
		}
	}
	return tree
}

// Memory samples the RSS of the server's whole tree (see Track).
func (s *Server) Memory(withPSS bool) MemSample {
	s.Track()
	return SampleMemory(s.tree(), withPSS)
}

func (s *Server) Exited() bool { return s.proc.Exited() }

// Stop sends SIGTERM, waits for the exit (killing the process group after
// 30 s), reaps it, then checks that every descendant seen during the run is
// gone, killing by pid any that is not. It is safe to call twice.
func (s *Server) Stop(ctx context.Context) StopReport {
	s.stopOnce.Do(func() { s.stopReport = s.stop(ctx) })
	return s.stopReport
}

func (s *Server) stop(ctx context.Context) StopReport {
	s.Track()
	rep, start := StopReport{Signal: "SIGTERM", Exit: "0"}, time.Now()
	rep.Killed = s.proc.Stop(30 * time.Second)
	rep.TookMS = ms(time.Since(start))
	if err := s.proc.Err(); err != nil {
		rep.Exit = err.Error()
	}
	s.stopTracking()
	<-s.trackDone
	rep.Tracked = len(s.seen)
	// Everything the server started must go away on its own, and so must
	// orphans re-parented to us (we are a child subreaper).
	deadline := time.Now().Add(10 * time.Second)
	var left []Proc
	for {
		proctest.ReapOrphans()
		left = left[:0]
		for _, p := range s.seen {
			if alive(p) {
				left = append(left, p)
			}
		}
		for _, p := range s.tree() {
			if _, ok := s.seen[keyOf(p)]; !ok && p.PPID == os.Getpid() {
				p.Comm = procKind(p)
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range left {
		rep.Leftover = append(rep.Leftover, fmt.Sprintf("%d(%s)", p.PID, p.Comm))
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
	if len(left) > 0 {
		time.Sleep(200 * time.Millisecond)
		proctest.ReapOrphans()
	}
	os.RemoveAll(s.dir)
	s.log.Info("cleanup", "result", rep.Summary())
	return rep
}

// settle waits (up to max) until the server's process tree has at most
// procs processes: closed sessions' workers and renderers take a while to
// go on a loaded machine, and a baseline taken before they are gone is wrong.
func (s *Server) settle(ctx context.Context, procs int, max time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for len(processTree(s.PID)) > procs {
		if time.Since(start) > max {
			return time.Since(start), false, nil
		}
		if err := sleepCtx(ctx, time.Second); err != nil {
			return time.Since(start), false, err
		}
	}
	return time.Since(start), true, nil
}

func (s *Server) DBBytes() int64 {
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(s.DBPath + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
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

// serveRun is serve for one run of a scenario on a server of its own: the
// scenario's server environment with set on top, recorded in *env.
func serveRun(ctx context.Context, log *slog.Logger, scfg ServerConfig, set map[string]string, timeout time.Duration, env *map[string]string, cleanup *StopReport) (*Server, *Client, func(), error) {
	scfg.Env = copyEnv(scfg.Env)
	maps.Copy(scfg.Env, set)
	*env = scfg.Env
	var interrupted bool // the scenario says whether it was interrupted
	return serve(ctx, log, scfg, timeout, cleanup, &interrupted)
}
