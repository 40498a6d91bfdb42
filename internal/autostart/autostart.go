// Package autostart owns starting proxy-server on demand for mcp-bridge: when
// nothing answers at a loopback MCP_PROXY_URL it runs `proxy-server serve` in
// the background, detached from the bridge (its own session, stdin from
// /dev/null, output appended to a log file in the data directory), so the
// server outlives the bridge that started it.
//
// Starting is guarded so that bridges launched together start exactly one
// server: an exclusive flock on a lock file in the data directory, a second
// look at /health under the lock, and a pid file that tells a later bridge a
// server is still coming up. It never stops a server, never starts one for a
// non-loopback URL, and never writes to stdout (the bridge's MCP channel).
package autostart

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// File names in the data directory. The pid file is autostart's own record
// of the server it started (plain decimal); proxy-server's own pid file
// (proxy-server.pid) is a different file that autostart leaves alone.
const (
	LockFile = "autostart.lock"
	PIDFile  = "autostart.pid"
	LogFile  = "proxy-server.log"
)

// ServerName is the command autostart looks for.
const ServerName = "proxy-server"

// DefaultStartTimeout bounds the wait for a started server to answer.
const DefaultStartTimeout = 60 * time.Second

// ErrNotLoopback is returned by New for a URL autostart must not act on: a
// server elsewhere is not this machine's to start.
var ErrNotLoopback = errors.New("autostart needs an http URL on a loopback host")

// ErrDataDir is wrapped by Ensure's error when the data directory cannot be
// made or written: no later attempt can do better.
var ErrDataDir = errors.New("autostart: cannot write the data directory")

// ErrExited is wrapped by Ensure's error when the server it started (or
// found starting) exited without ever answering, and nothing else answers
// either: it failed at start-up, and would fail the same way again. The
// error carries the last lines of its log, which say why.
var ErrExited = errors.New("autostart: proxy-server exited before answering")

// Config says where the server should listen and keep its files.
type Config struct {
	// URL is MCP_PROXY_URL; its port (and loopback host) are passed to the
	// server as PROXY_PORT and PROXY_HOST so both sides agree.
	URL string
	// DatabasePath is passed as PROXY_DATABASE_PATH (made absolute); the
	// lock, pid and log files live in its directory.
	DatabasePath string
	// Executable is the proxy-server to run; "" finds it next to the running
	// executable, then on PATH.
	Executable string
	// Env is the server's base environment (usually os.Environ()).
	Env []string
	// Token is MCP_PROXY_TOKEN; it becomes the server's PROXY_AUTH_TOKEN
	// unless Env already sets one or sets PROXY_CLIENT_TOKENS_FILE (then
	// it is a client token).
	Token string
	// StartTimeout bounds the wait for a started server to answer /health
	// (DefaultStartTimeout when zero); ctx may end it sooner.
	StartTimeout time.Duration
	Logger       *slog.Logger
	// Clock times the pauses between looks at a starting server; nil is
	// the real clock. StartTimeout bounds a real process's start-up and
	// is always real time.
	Clock clock.Clock
}

// Starter starts proxy-server when nothing answers.
type Starter struct {
	base    *url.URL
	host    string
	port    string
	dbPath  string
	dataDir string
	exe     string
	env     []string
	token   string
	timeout time.Duration
	log     *slog.Logger
	probe   *http.Client
	clock   clock.Clock
}

// New checks cfg and returns a Starter. It returns ErrNotLoopback (wrapped)
// when cfg.URL is not http on a loopback host.
func New(cfg Config) (*Starter, error) {
	u, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil {
		return nil, fmt.Errorf("MCP_PROXY_URL %q: %w", cfg.URL, err)
	}
	if !Loopback(u) {
		return nil, fmt.Errorf("%w: %s", ErrNotLoopback, cfg.URL)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	if cfg.DatabasePath == "" {
		return nil, errors.New("autostart: no data directory: set PROXY_DATABASE_PATH (neither XDG_STATE_HOME nor HOME is set)")
	}
	db, err := filepath.Abs(cfg.DatabasePath)
	if err != nil {
		return nil, fmt.Errorf("autostart: database path %q: %w", cfg.DatabasePath, err)
	}
	s := &Starter{
		base: u, host: u.Hostname(), port: port,
		dbPath: db, dataDir: filepath.Dir(db),
		exe: cfg.Executable, env: cfg.Env, token: cfg.Token,
		timeout: cfg.StartTimeout, log: cfg.Logger, clock: clock.Or(cfg.Clock),
		// A probe needs no keep-alive: it runs rarely and must see a fresh dial.
		probe: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 3 * time.Second},
	}
	if s.timeout <= 0 {
		s.timeout = DefaultStartTimeout
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Loopback reports whether u is an http URL whose host is a loopback address
// or "localhost".
func Loopback(u *url.URL) bool {
	if u == nil || u.Scheme != "http" {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// DataDir is where the lock, pid and log files live.
func (s *Starter) DataDir() string { return s.dataDir }

// Ensure returns nil once something answers HTTP at the URL, starting
// proxy-server first when nothing does. Of several Ensure calls at once, in
// this process or others sharing the data directory, exactly one starts a
// server; the others wait for it.
func (s *Starter) Ensure(ctx context.Context) error {
	if st := s.check(ctx); st == answering {
		return nil
	}
	if err := os.MkdirAll(s.dataDir, 0o700); err != nil {
		return s.dataDirError(err)
	}
	unlock, err := lock(ctx, filepath.Join(s.dataDir, LockFile))
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return s.dataDirError(err)
	}
	if err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	defer unlock()

	// Another bridge may have started it while we waited for the lock.
	st := s.check(ctx)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	if st == answering {
		return nil
	}
	if pid, ok := s.startingPID(); ok {
		// Started earlier (by us or another bridge) and not answering yet:
		// it binds its port first, so it may hold connections unanswered.
		s.log.Debug("proxy-server is still starting; waiting for it", "pid", pid)
		return s.waitAnswer(ctx, pid)
	}
	if st == unclear {
		return fmt.Errorf("autostart: something at %s accepts connections but does not answer /health; not starting another server", s.base)
	}
	pid, err := s.start()
	if err != nil {
		return err
	}
	return s.waitAnswer(ctx, pid)
}

// dataDirError says which directory cannot be written, and how to choose
// another.
func (s *Starter) dataDirError(err error) error {
	return fmt.Errorf("%w %s (set PROXY_DATABASE_PATH to a file in a writable directory): %w", ErrDataDir, s.dataDir, err)
}

type state int

const (
	refused   state = iota // nothing listens: safe to start a server
	answering              // an HTTP server answered
	unclear                // no HTTP answer, yet the port may be taken
)

// check probes GET /health once. Any HTTP answer (even 503 or 401) counts:
// a server is there.
func (s *Starter) check(ctx context.Context) state {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base.String()+"/health", nil)
	if err != nil {
		return unclear
	}
	resp, err := s.probe.Do(req)
	if err != nil {
		// Only a refused connection proves the port is free; anything else
		// (a timeout, a reset) may be a server that is there but busy.
		if errors.Is(err, syscall.ECONNREFUSED) {
			return refused
		}
		return unclear
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return answering
}

// start runs `proxy-server serve` detached and records its pid. While the
// bridge lives it reaps the server if that exits; afterwards the server is
// re-parented like any daemon.
func (s *Starter) start() (int, error) {
	exe, err := s.executable()
	if err != nil {
		return 0, err
	}
	logPath := filepath.Join(s.dataDir, LogFile)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, s.dataDirError(err)
	}
	defer logf.Close() // the child holds its own descriptor
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, fmt.Errorf("autostart: %w", err)
	}
	defer devnull.Close()

	cmd := exec.Command(exe, "serve") // not CommandContext: it must outlive the bridge
	cmd.Env = s.serverEnv()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = detached()
	fmt.Fprintf(logf, "# %s mcp-bridge (pid %d) starts %s serve on %s:%s with database %s\n",
		time.Now().Format(time.RFC3339), os.Getpid(), exe, s.host, s.port, s.dbPath)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("autostart: starting %s: %w", exe, err)
	}
	pid := cmd.Process.Pid
	go func() {
		err := cmd.Wait()
		s.log.Info("the proxy-server this bridge started has exited", "pid", pid, "status", err)
	}()
	if err := os.WriteFile(filepath.Join(s.dataDir, PIDFile), []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		s.log.Warn("autostart: writing the pid file", "err", err)
	}
	s.log.Debug("started proxy-server", "pid", pid, "executable", exe, "port", s.port, "database", s.dbPath, "log", logPath)
	return pid, nil
}

// serverEnv is the base environment with the listen address and database
// the bridge expects.
func (s *Starter) serverEnv() []string {
	set := map[string]string{
		"PROXY_HOST":          s.host,
		"PROXY_PORT":          s.port,
		"PROXY_DATABASE_PATH": s.dbPath,
	}
	hasToken, clientTokens := false, false
	out := make([]string, 0, len(s.env)+len(set)+1)
	for _, kv := range s.env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok {
			continue
		}
		switch k {
		case "PROXY_AUTH_TOKEN":
			hasToken = true
		case "PROXY_CLIENT_TOKENS_FILE":
			clientTokens = strings.TrimPrefix(kv, k+"=") != ""
		}
		out = append(out, kv)
	}
	for _, k := range []string{"PROXY_HOST", "PROXY_PORT", "PROXY_DATABASE_PATH"} {
		out = append(out, k+"="+set[k])
	}
	// With client tokens configured the bridge's token is one of them: it
	// must not make itself the operator's token of the server it starts
	// (that server then needs PROXY_AUTH_TOKEN of its own, and says so).
	if s.token != "" && !hasToken && !clientTokens {
		out = append(out, "PROXY_AUTH_TOKEN="+s.token)
	}
	return out
}

func (s *Starter) executable() (string, error) {
	if s.exe != "" {
		return s.exe, nil
	}
	self, _ := os.Executable()
	return FindServer(self, exec.LookPath)
}

// FindServer returns proxy-server next to self (the running executable, or
// the target of a symlink to it), else lookPath's answer.
func FindServer(self string, lookPath func(string) (string, error)) (string, error) {
	if self != "" {
		dirs := []string{filepath.Dir(self)}
		if real, err := filepath.EvalSymlinks(self); err == nil && filepath.Dir(real) != dirs[0] {
			dirs = append(dirs, filepath.Dir(real))
		}
		for _, d := range dirs {
			p := filepath.Join(d, ServerName)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	p, err := lookPath(ServerName)
	if err != nil {
		return "", fmt.Errorf("autostart: %s is neither next to %s nor on PATH: %w", ServerName, self, err)
	}
	return p, nil
}

// startingPID returns the pid in the pid file when that process is still a
// running proxy-server (a stale file or a reused pid does not count).
func (s *Starter) startingPID() (int, bool) {
	b, err := os.ReadFile(filepath.Join(s.dataDir, PIDFile))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, running(pid, ServerName)
}

// waitAnswer polls /health until the server answers, its process ends, ctx
// ends or the start timeout passes. A server that is merely slow is left
// running: the pid file tells the next Ensure to wait for it.
func (s *Starter) waitAnswer(ctx context.Context, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	logPath := filepath.Join(s.dataDir, LogFile)
	delay := 50 * time.Millisecond
	for {
		if s.check(ctx) == answering {
			s.log.Debug("proxy-server answers", "pid", pid, "url", s.base.String())
			return nil
		}
		if !running(pid, ServerName) {
			if s.check(ctx) == answering { // lost a race to a server started by hand
				return nil
			}
			s.forgetPID(pid)
			return fmt.Errorf("%w (pid %d); last lines of %s:\n%s", ErrExited, pid, logPath, tail(logPath, 15))
		}
		if err := clock.Sleep(ctx, s.clock, delay); err != nil {
			return fmt.Errorf("autostart: proxy-server (pid %d) did not answer at %s in time (it keeps starting; see %s): %w",
				pid, s.base, logPath, err)
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// forgetPID removes the pid file when it names pid, a server that is gone:
// it must not send anyone to kill or wait for that pid. Ensure holds the
// lock, so no other start writes the file meanwhile.
func (s *Starter) forgetPID(pid int) {
	path := filepath.Join(s.dataDir, PIDFile)
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
		_ = os.Remove(path)
	}
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 64<<10 {
		_, _ = f.Seek(-64<<10, io.SeekEnd)
	}
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
