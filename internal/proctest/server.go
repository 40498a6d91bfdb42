package proctest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// ServerConfig says how to start `proxy-server serve` as a child process.
type ServerConfig struct {
	// Binary is the proxy-server executable.
	Binary string
	// Args follow "serve" (-port, -db, …).
	Args []string
	// Dir is the working directory ("" inherits this process's).
	Dir string
	// Env is the whole environment (nil inherits this process's).
	Env []string
	// Log receives the server's stdout and stderr. An *os.File is handed
	// to the child as it is, so that nothing of this process sits on the
	// server's logging path; the listen line is then read back from the
	// file.
	Log io.Writer
}

// Server is a proxy-server child in its own process group.
type Server struct {
	Cmd *exec.Cmd
	PID int

	file   *os.File    // Log, when it is a file
	listen *listenLine // Log wrapped, when it is not
	done   chan struct{}
	err    error
}

// listenRE finds the address in proxy-server's "listening" line (text log
// format, the default).
var listenRE = regexp.MustCompile(`proxy-server listening"? addr=(\S+)`)

// ListenAddr returns the address of the first "proxy-server listening"
// line of a server log.
func ListenAddr(log []byte) (string, bool) {
	if m := listenRE.FindSubmatch(log); m != nil {
		return string(m[1]), true
	}
	return "", false
}

// StartServer starts `proxy-server serve` with cfg's arguments, in its own
// process group, killed with SIGTERM by the kernel if this process dies
// first (Linux). The caller waits for it to listen (WaitListening) and
// stops it (Stop).
func StartServer(cfg ServerConfig) (*Server, error) {
	cmd := exec.Command(cfg.Binary, append([]string{"serve"}, cfg.Args...)...)
	cmd.Dir, cmd.Env = cfg.Dir, cfg.Env
	cmd.SysProcAttr = serverProcAttr()
	s := &Server{Cmd: cmd, done: make(chan struct{})}
	if f, ok := cfg.Log.(*os.File); ok {
		s.file = f
		cmd.Stdout, cmd.Stderr = f, f
	} else {
		s.listen = &listenLine{w: cfg.Log, found: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = s.listen, s.listen
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cfg.Binary, err)
	}
	s.PID = cmd.Process.Pid
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// Done is closed once the server has exited and been reaped.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is how the server exited, once Done is closed.
func (s *Server) Err() error { return s.err }

// Exited reports whether the server has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// WaitListening waits until the server logs that it listens and returns
// the address. It fails when the server exits first, after timeout, or
// when ctx ends; the server is left running then, for the caller to Stop.
func (s *Server) WaitListening(ctx context.Context, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var tick <-chan time.Time
	found := make(<-chan struct{})
	if s.file != nil {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	} else {
		found = s.listen.found
	}
	for {
		if addr, ok := s.addr(); ok {
			return addr, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for proxy-server to listen: %w", ctx.Err())
		case <-s.done:
			if addr, ok := s.addr(); ok {
				return addr, nil
			}
			return "", fmt.Errorf("proxy-server exited before listening (%v)", s.err)
		case <-deadline.C:
			return "", fmt.Errorf("proxy-server did not listen within %s", timeout)
		case <-found:
		case <-tick:
		}
	}
}

func (s *Server) addr() (string, bool) {
	if s.file == nil {
		return s.listen.addr()
	}
	b, err := os.ReadFile(s.file.Name())
	if err != nil {
		return "", false
	}
	return ListenAddr(b)
}

// Stop sends the server SIGTERM and waits for it to exit; after timeout it
// kills its process group and waits. killed reports that it had to.
func (s *Server) Stop(timeout time.Duration) (killed bool) {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM) // gone already: Done says so
	select {
	case <-s.done:
		return false
	case <-time.After(timeout):
	}
	killGroup(s.PID)
	<-s.done
	return true
}

// listenLine passes the server's output on and notes the address of its
// listen line.
type listenLine struct {
	w     io.Writer
	found chan struct{}

	mu      sync.Mutex
	partial []byte
	address string
}

func (l *listenLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.address == "" {
		l.partial = append(l.partial, p...)
		if i := bytes.LastIndexByte(l.partial, '\n'); i >= 0 {
			if addr, ok := ListenAddr(l.partial[:i+1]); ok {
				l.address = addr
				close(l.found)
				l.partial = nil
			} else {
				l.partial = append(l.partial[:0], l.partial[i+1:]...)
			}
		}
	}
	l.mu.Unlock()
	if l.w == nil {
		return len(p), nil
	}
	return l.w.Write(p)
}

func (l *listenLine) addr() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.address, l.address != ""
}
