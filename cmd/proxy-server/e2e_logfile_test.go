//go:build unix

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// TestLogFile runs the real proxy-server with -log-file: the log goes to
// the file, owner-only, and stderr stays silent; logrotate's rename then
// SIGHUP sends the next lines to a new file at the path, the renamed one
// keeping the earlier ones, none lost or split while requests are logged
// throughout; the same SIGHUP reloads the client tokens.
func TestLogFile(t *testing.T) {
	requireBrowser(t)
	serverBin, _ := binaries(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "proxy.log")
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("alice 3f9c2a7b1e8d4c6f0a5b9e2d7c1f4a8b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const operator = "9b1e4d7a2c8f5e0b3a6d9c2f7e1b4a8d"
	port := e2etest.FreePort(t)
	var stderr bytes.Buffer
	out := &lockedWriter{w: &stderr}
	srv, err := proctest.StartServer(proctest.ServerConfig{
		Binary: serverBin,
		Args:   []string{"-port", port, "-db", filepath.Join(dir, "proxy.db"), "-log-level", "debug", "-log-file", logPath},
		Env: append(os.Environ(), "PROXY_WARM_POOL=0", "PROXY_AUTH_TOKEN="+operator,
			"PROXY_CLIENT_TOKENS_FILE="+tokens),
		Log: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Stop(15 * time.Second)
		if t.Failed() {
			old, _ := os.ReadFile(logPath + ".1")
			cur, _ := os.ReadFile(logPath)
			t.Logf("stderr:\n%s\nrotated log:\n%s\nlog:\n%s", stderr.String(), old, cur)
		}
	})
	waitForLine(t, srv, logPath, "proxy-server listening")
	base := "http://127.0.0.1:" + port

	t.Run("log in the file, owner only, nothing on stderr", func(t *testing.T) {
		fi, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("log file mode %v, want -rw-------", perm)
		}
		out.mu.Lock()
		got := stderr.String()
		out.mu.Unlock()
		if diff := cmp.Diff("", got); diff != "" {
			t.Errorf("stderr with a log file (-want +got):\n%s", diff)
		}
	})

	t.Run("rotation on SIGHUP keeps every line whole", func(t *testing.T) {
		// Requests are logged all through the rename and the reopen: each
		// leaves one "http request" line naming its path.
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			sent int
			stop = make(chan struct{})
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/probe/%d", base, i), nil)
				req.Header.Set("Authorization", "Bearer "+operator)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				resp.Body.Close()
				mu.Lock()
				sent = i + 1
				mu.Unlock()
			}
		}()
		waitForLine(t, srv, logPath, "/probe/20 ")
		if err := os.Rename(logPath, logPath+".1"); err != nil {
			t.Fatal(err)
		}
		if err := srv.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitForLine(t, srv, logPath, "log file reopened")
		mu.Lock()
		after := sent + 20
		mu.Unlock()
		waitForLine(t, srv, logPath, fmt.Sprintf("/probe/%d ", after))
		close(stop)
		wg.Wait()
		mu.Lock()
		total := sent
		mu.Unlock()
		// The server logs a request after its answer is sent: the last one
		// may still be on its way to the file.
		waitForLine(t, srv, logPath, fmt.Sprintf("/probe/%d ", total-1))

		old := readLogLines(t, logPath+".1")
		cur := readLogLines(t, logPath)
		seen := map[string]int{}
		probe := regexp.MustCompile(`path=/probe/(\d+) `)
		for _, lines := range [][]string{old, cur} {
			for _, l := range lines {
				if m := probe.FindStringSubmatch(l); m != nil {
					seen[m[1]]++
				}
			}
		}
		var missing []string
		for i := range total {
			if n := seen[fmt.Sprint(i)]; n != 1 {
				missing = append(missing, fmt.Sprintf("/probe/%d logged %d times", i, n))
			}
		}
		if len(missing) > 0 {
			t.Errorf("of %d requests, %d not logged exactly once: %v", total, len(missing), missing)
		}
		if !containsLine(old, "proxy-server listening") || containsLine(old, "log file reopened") {
			t.Errorf("the rotated file should keep the lines before the SIGHUP, and only those")
		}
		if containsLine(cur, "proxy-server listening") {
			t.Errorf("the new file has a line from before the SIGHUP")
		}
		if !containsLine(old, "client tokens reloaded") && !containsLine(cur, "client tokens reloaded") {
			t.Errorf("the SIGHUP that reopened the log did not reload the client tokens")
		}
		fi, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("reopened log file mode %v, want -rw-------", perm)
		}
	})
}

// TestLogFileDirectoryMissing: a log file in a directory that does not
// exist stops proxy-server at the start, with an error on stderr naming
// PROXY_LOG_FILE, and creates nothing.
func TestLogFileDirectoryMissing(t *testing.T) {
	serverBin, _ := binaries(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "missing", "proxy.log")
	cmd := exec.Command(serverBin, "serve", "-port", "0", "-db", filepath.Join(dir, "proxy.db"))
	cmd.Env = append(os.Environ(), "PROXY_LOG_FILE="+logPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	e2etest.ExitsNonZero(t, cmd, time.Minute)
	if !strings.Contains(stderr.String(), "PROXY_LOG_FILE") || !strings.Contains(stderr.String(), "does not exist") {
		t.Errorf("stderr does not say PROXY_LOG_FILE's directory is missing:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Dir(logPath)); err == nil {
		t.Errorf("the missing directory was created")
	}
}

// waitForLine waits until the file at path holds a line containing s. The
// bound only ends a hung run.
func waitForLine(t *testing.T, srv *proctest.Server, path, s string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if b, err := os.ReadFile(path); err == nil && containsLine(strings.Split(string(b), "\n"), s) {
			return
		}
		if srv.Exited() {
			t.Fatalf("proxy-server exited (%v) before %q was logged", srv.Err(), s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q not logged in %s", s, path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readLogLines reads a log file's lines, failing the test on one that is
// not a whole record: each starts with time= and ends with a newline.
func readLogLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s ends inside a line", path)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "time=") {
			t.Errorf("%s: split or foreign line %q", path, sc.Text())
		}
		lines = append(lines, sc.Text())
	}
	return lines
}

func containsLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
