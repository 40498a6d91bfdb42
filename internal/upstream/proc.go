package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

const (
	// stderrRingBytes is how much of a child's stderr is kept for
	// diagnostics; older output is dropped.
	stderrRingBytes = 64 << 10
	// stderrLogLineBytes bounds one logged stderr line: a child printing a
	// megabyte without a newline must not produce a megabyte log record.
	stderrLogLineBytes = 4 << 10
	// stopStepTimeout is how long each polite step of a stop waits.
	stopStepTimeout = 2 * time.Second
	// reapTimeout bounds the wait after SIGKILL; only a process stuck in
	// uninterruptible sleep outlives it.
	reapTimeout = 5 * time.Second
)

// InstanceEnv names the environment variable that marks every process a
// Host starts (HostConfig.InstanceID) and, by inheritance, their
// descendants: the one reliable way to tell a dead proxy-server's leftovers
// from anything else on the machine.
const InstanceEnv = "PWPROXY_INSTANCE"

// childEnv is the proxy's environment plus extra, without any instance
// marker the proxy itself inherited: a child must carry its own host's
// marker or none, never one that would let another server's cleanup end it.
func childEnv(extra []string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, InstanceEnv+"=")
	})
	return append(env, extra...)
}

// process is a started child in its own process group (a Job Object on
// Windows), with our own reaper: mcp-go's transport has no Wait and would
// not tell us the exit status.
type process struct {
	cmd   *exec.Cmd
	pid   int
	group procGroup // what a signal to the group reaches
	done  chan struct{}
	clock clock.Clock // times the waits of stop and kill

	mu      sync.Mutex // guards reaped: signals must not reach a recycled pgid
	reaped  bool
	sent    []syscall.Signal // signals sent to the group, in order
	exitErr error            // written before done is closed
}

// startProcess starts cmd (which must have SysProcAttr from sysProcAttr and
// only *os.File stdio, so Wait never waits for copying goroutines) and reaps
// it in the background; clk (nil: the real one) times its stop.
func startProcess(cmd *exec.Cmd, clk clock.Clock) (*process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	group, err := joinGroup(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, group: group, done: make(chan struct{}), clock: clock.Or(clk)}
	go p.reap()
	return p, nil
}

func (p *process) reap() {
	var err error
	if canWaitUnreaped && waitExited(p.pid) == nil {
		p.mu.Lock()
		// The leader is a zombie, so the pgid is still ours: take down
		// whatever it left behind (renderers, a browser it launched) before
		// the id can be recycled.
		p.group.signal(p.pid, syscall.SIGKILL)
		err = p.cmd.Wait()
		p.reaped = true
		p.group.release()
		p.mu.Unlock()
	} else {
		err = p.cmd.Wait()
		p.mu.Lock()
		p.reaped = true
		p.group.release()
		p.mu.Unlock()
	}
	p.exitErr = err
	close(p.done)
}

// exitStatus is the exit status once the process was reaped, else nil.
func (p *process) exitStatus() error {
	if !p.exited() {
		return nil
	}
	return p.exitErr
}

// signalGroup sends sig to the whole process group unless the leader was
// already reaped.
func (p *process) signalGroup(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		p.group.signal(p.pid, sig)
		p.sent = append(p.sent, sig)
	}
}

// signals names the signals sent to the group so far, in order: how a
// stop ended (none: the process exited by itself).
func (p *process) signals() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, len(p.sent))
	for i, s := range p.sent {
		out[i] = signalName(s)
	}
	return out
}

// exited reports whether the process has been reaped.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// dying reports whether the process exited or is about to (procDying):
// a request written to it now would never be read.
func (p *process) dying() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Once reaped, the pid may belong to another process.
	return p.reaped || procDying(p.pid)
}

// stop takes the process group down: optional polite step (e.g. closing
// stdin) already done by the caller, then wait, SIGTERM, wait, SIGKILL, reap.
// ctx ending skips the polite waits but never the kill and reap.
func (p *process) stop(ctx context.Context, politeWait bool) error {
	if politeWait && p.waitFor(ctx, stopStepTimeout) {
		return nil
	}
	p.signalGroup(syscall.SIGTERM)
	if p.waitFor(ctx, stopStepTimeout) {
		return nil
	}
	return p.kill()
}

// kill SIGKILLs the process group at once and waits for the reap.
func (p *process) kill() error {
	p.signalGroup(syscall.SIGKILL)
	t := p.clock.NewTimer(reapTimeout)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C():
		return fmt.Errorf("process %d did not exit after SIGKILL", p.pid)
	}
}

// waitFor waits for the exit up to d or until ctx ends.
func (p *process) waitFor(ctx context.Context, d time.Duration) bool {
	t := p.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-ctx.Done():
		return p.exited()
	case <-t.C():
		return false
	}
}

// ringBuffer keeps the last max bytes written to it.
type ringBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newRingBuffer(max int) *ringBuffer { return &ringBuffer{max: max} }

func (r *ringBuffer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(p) >= r.max {
		r.buf = append(r.buf[:0], p[len(p)-r.max:]...)
		return n, nil
	}
	if over := len(r.buf) + len(p) - r.max; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
	return n, nil
}

func (r *ringBuffer) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.buf)
}

// drainStderr copies a child's stderr into ring until EOF, logging each line
// at debug and handing it to onLine (if set). It never stops reading early:
// a child blocked on a full stderr pipe stops answering on stdout too.
func drainStderr(r io.Reader, ring *ringBuffer, logger *slog.Logger, onLine func(string)) {
	br := bufio.NewReaderSize(r, stderrLogLineBytes)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			_, _ = ring.Write(chunk)
			line := string(trimEOL(chunk))
			if onLine != nil {
				onLine(line)
			}
			if line != "" {
				logger.Debug("child stderr", "line", line)
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// errLineTooLong is returned by lineLimitReader.
var errLineTooLong = errors.New("upstream worker wrote a line longer than the limit")

// lineLimitReader fails once a single line exceeds max bytes. mcp-go reads
// stdout with bufio.ReadString, which would otherwise buffer a runaway
// worker's endless line until memory runs out.
type lineLimitReader struct {
	r        io.Reader
	max      int
	cur      int // bytes since the last newline
	exceeded func()
	once     sync.Once
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	if l.cur > l.max {
		return 0, errLineTooLong
	}
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			l.cur = 0
			continue
		}
		l.cur++
		if l.cur > l.max {
			if l.exceeded != nil {
				l.once.Do(l.exceeded)
			}
			return n, errLineTooLong
		}
	}
	return n, err
}

// closeFiles closes every non-nil file, ignoring errors: used on paths where
// the files are ours and the process is gone.
func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// loggerOr returns l, or slog.Default() when l is nil.
func loggerOr(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}
