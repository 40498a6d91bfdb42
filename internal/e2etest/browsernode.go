package e2etest

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// BrowserNode is `proxy-server browser-node` run as a process of its own: a
// Playwright browser server on this machine's Chromium, which a proxy-server
// places sessions on through PROXY_BROWSER_ENDPOINTS. It runs in its own
// process group, which Kill and the test's cleanup end whole.
type BrowserNode struct {
	t      *testing.T
	bin    string
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	// Endpoint is the ws:// URL the node listens on.
	Endpoint string
}

// StartBrowserNode starts a browser node of bin (a built proxy-server) on
// 127.0.0.1:port at path /pw, and waits until it listens.
func StartBrowserNode(t *testing.T, bin, port string) *BrowserNode {
	t.Helper()
	n := &BrowserNode{t: t, bin: bin, addr: "127.0.0.1:" + port}
	n.start()
	t.Cleanup(n.Kill)
	return n
}

func (n *BrowserNode) start() {
	n.t.Helper()
	cmd := exec.Command(n.bin, "browser-node", "-listen", n.addr, "-path", "/pw")
	cmd.Dir = ProjectRoot(n.t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		n.t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	n.cmd, n.exited = cmd, make(chan struct{})
	endpoint := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "ws://") {
				endpoint <- line
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(n.exited)
	}()
	select {
	case n.Endpoint = <-endpoint:
	case <-n.exited:
		n.t.Fatalf("browser node on %s exited before listening:\n%s", n.addr, stderr.String())
	case <-time.After(60 * time.Second):
		n.Kill()
		n.t.Fatalf("browser node on %s did not listen within 60s:\n%s", n.addr, stderr.String())
	}
}

// Kill sends SIGKILL to the node and every process below it (the browser
// server, Chromium and its helpers, which run in process groups of their
// own), as a machine that dies would, and waits for the node to be reaped.
// It does nothing to a node already killed.
func (n *BrowserNode) Kill() {
	select {
	case <-n.exited:
		return
	default:
	}
	procs := proctest.Descendants(n.cmd.Process.Pid)
	_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	proctest.KillAll(procs)
	select {
	case <-n.exited:
	case <-time.After(10 * time.Second):
		n.t.Errorf("browser node %d survived SIGKILL", n.cmd.Process.Pid)
	}
}

// Restart starts the node again on the same address, after a Kill.
func (n *BrowserNode) Restart() {
	n.t.Helper()
	n.Kill()
	n.start()
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
