package proctest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Node is `proxy-server browser-node` run as a child process in its own
// process group: a Playwright browser server on this machine's Chromium,
// which a proxy-server places sessions on through PROXY_BROWSER_ENDPOINTS.
type Node struct {
	// Endpoint is the ws:// URL the node listens on.
	Endpoint string
	PID      int

	done chan struct{}
}

// StartNode starts a browser node of bin (a proxy-server executable) in dir
// (where node_modules is) on addr ("127.0.0.1:0" picks a port), at path
// /pw, and waits until it listens or ctx ends. Its log goes to log (may be
// nil). tmp, when set, is its TMPDIR: what a node killed with SIGKILL
// leaves there (it has no time to remove its directory) goes with tmp.
func StartNode(ctx context.Context, bin, dir, addr, tmp string, log io.Writer) (*Node, error) {
	cmd := exec.Command(bin, "browser-node", "-listen", addr, "-path", "/pw")
	cmd.Dir = dir
	if tmp != "" {
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	}
	cmd.SysProcAttr = serverProcAttr()
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("browser node stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting a browser node: %w", err)
	}
	n := &Node{PID: cmd.Process.Pid, done: make(chan struct{})}
	endpoint := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "ws://") {
				select {
				case endpoint <- line:
				default:
				}
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(n.done)
	}()
	select {
	case n.Endpoint = <-endpoint:
		return n, nil
	case <-n.done:
		return nil, fmt.Errorf("the browser node on %s exited before listening", addr)
	case <-ctx.Done():
		n.Kill()
		return nil, fmt.Errorf("waiting for the browser node on %s: %w", addr, ctx.Err())
	}
}

// Done is closed once the node has exited and been reaped.
func (n *Node) Done() <-chan struct{} { return n.done }

// Kill sends SIGKILL to the node and every process below it (the browser
// server, Chromium and its helpers, in process groups of their own), as a
// machine that dies would, and waits for the node to be reaped and every
// thread of every process below it to have exited: once Kill returns, the
// node's port refuses and its connections are closed.
func (n *Node) Kill() {
	select {
	case <-n.done:
		return
	default:
	}
	procs := Descendants(n.PID)
	killGroup(n.PID)
	KillAll(procs)
	<-n.done
	WaitGone(time.Minute, func() []Proc {
		var left []Proc
		for _, p := range procs {
			if !Exited(p.PID) {
				left = append(left, p)
			}
		}
		return left
	})
}

// Stop asks the node to stop (SIGTERM) and waits up to timeout, then
// kills it. killed reports that it had to.
func (n *Node) Stop(timeout time.Duration) (killed bool) {
	terminate(n.PID)
	select {
	case <-n.done:
		return false
	case <-time.After(timeout):
	}
	n.Kill()
	return true
}
