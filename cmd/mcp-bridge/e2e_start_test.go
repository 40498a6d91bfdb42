//go:build linux

package main

// End-to-end tests of how the real mcp-bridge starts, as an MCP client
// launches it: where an autostarted server keeps its files, what the bridge
// prints on stderr, and how it fails when it cannot go on.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/autostart"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

// launchBridge starts mcp-bridge in dir with env over the test's
// environment, at its default log level, as an MCP client would.
func launchBridge(t *testing.T, dir string, env ...string) *bridgeProc {
	t.Helper()
	_, bridgeBin := binaries(t)
	b := &bridgeProc{logs: &logWatch{}}
	inDir := transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, command, args...)
		cmd.Env, cmd.Dir = append(os.Environ(), env...), dir
		return cmd, nil
	})
	tr := transport.NewStdioWithOptions(bridgeBin, env, nil, inDir, transport.WithCommandStderrWriter(b.logs))
	b.c = client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := b.c.Start(context.Background()); err != nil {
		t.Fatalf("starting mcp-bridge: %v", err)
	}
	t.Cleanup(b.close)
	return b
}

// converse runs what a conversation does first: initialize, tools/list and
// one browser call.
func (b *bridgeProc) converse(t *testing.T, url string) {
	t.Helper()
	b.initialize(t, "quiet")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := b.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list = %v, %v", tools, err)
	}
	b.mustNavigate(t, url)
}

// TestBridgeQuiet: at the default log level a bridge that starts and works
// normally prints nothing on stderr (MCP clients show every line of it to
// the user), whether proxy-server runs already or the bridge starts it.
// Started by a bridge, the server keeps everything in the user's state
// directory and writes nothing where the client runs.
func TestBridgeQuiet(t *testing.T) {
	requireBrowser(t)
	pages := site(t)

	t.Run("server running", func(t *testing.T) {
		port := e2etest.FreePort(t)
		startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"))
		b := launchBridge(t, t.TempDir(), "MCP_PROXY_URL=http://127.0.0.1:"+port, "MCP_PROXY_AUTOSTART=0")
		b.converse(t, pages+"/")
		b.close()
		if s := b.logs.String(); s != "" {
			t.Errorf("mcp-bridge wrote to stderr:\n%s", s)
		}
	})

	t.Run("autostart", func(t *testing.T) {
		port, cwd, home, state := e2etest.FreePort(t), t.TempDir(), t.TempDir(), t.TempDir()
		dataDir := filepath.Join(state, "playwright-mcp-proxy")
		t.Cleanup(func() { stopAutostarted(t, dataDir) }) // after the bridge closes
		b := launchBridge(t, cwd,
			"MCP_PROXY_URL=http://127.0.0.1:"+port,
			"MCP_PROXY_AUTOSTART=1",
			"HOME="+home,
			"XDG_STATE_HOME="+state,
			"PROXY_DATABASE_PATH=", // the default, whatever the test's environment says
			"PROXY_WARM_POOL=0",
		)
		b.converse(t, pages+"/")
		b.close()
		if s := b.logs.String(); s != "" {
			t.Errorf("mcp-bridge wrote to stderr:\n%s", s)
		}
		for _, name := range []string{"proxy.db", autostart.LogFile, autostart.PIDFile, autostart.LockFile, "proxy-server.pid"} {
			if _, err := os.Stat(filepath.Join(dataDir, name)); err != nil {
				t.Errorf("%s is not in the state directory: %v", name, err)
			}
		}
		if fi, err := os.Stat(dataDir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("state directory %s: %v, %v; want it made 0700", dataDir, fi.Mode(), err)
		}
		stopAutostarted(t, dataDir) // what it writes while stopping counts too
		entries, err := os.ReadDir(cwd)
		if err != nil || len(entries) > 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("the client's working directory holds %v (%v), want nothing", names, err)
		}
	})
}

// TestBridgeDataDirNotWritable: when nothing answers and the data directory
// cannot be written, the bridge fails at once naming the directory, instead
// of retrying until its retry timeout.
func TestBridgeDataDirNotWritable(t *testing.T) {
	_, bridgeBin := binaries(t)
	state := t.TempDir()
	dataDir := filepath.Join(state, "playwright-mcp-proxy")
	if err := os.Mkdir(dataDir, 0o555); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bridgeBin)
	if os.Geteuid() == 0 {
		// Root writes into a read-only directory: run the bridge as nobody,
		// from a copy it may execute.
		bridgeBin = executableCopy(t, bridgeBin)
		cmd = exec.Command(bridgeBin)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if err := os.Chmod(state, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Dir(state), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Env = append(os.Environ(),
		"MCP_PROXY_URL=http://127.0.0.1:"+e2etest.FreePort(t),
		"MCP_PROXY_AUTOSTART=1",
		"MCP_PROXY_RETRY_TIMEOUT=30s",
		"XDG_STATE_HOME="+state,
		"PROXY_DATABASE_PATH=",
	)
	msg := failsAtOnce(t, cmd)
	if !strings.Contains(msg, "cannot write the data directory "+dataDir) || strings.Count(msg, "\n") > 0 {
		t.Errorf("stderr is not one fatal line naming %s:\n%s", dataDir, msg)
	}
}

// TestBridgeServerCannotStart: an autostarted server that exits before it
// answers (here its database path is a directory) fails the bridge at once
// with the server's own last log lines, instead of a wait for the whole
// retry timeout that ends in a dial error.
func TestBridgeServerCannotStart(t *testing.T) {
	requireBrowser(t)
	_, bridgeBin := binaries(t)
	dataDir := t.TempDir()
	db := filepath.Join(dataDir, "proxy.db")
	if err := os.Mkdir(db, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bridgeBin)
	cmd.Env = append(os.Environ(),
		"MCP_PROXY_URL=http://127.0.0.1:"+e2etest.FreePort(t),
		"MCP_PROXY_AUTOSTART=1",
		"MCP_PROXY_RETRY_TIMEOUT=5m",
		"PROXY_DATABASE_PATH="+db,
	)
	msg := failsAtOnce(t, cmd)
	if !strings.Contains(msg, "exited before answering") || !strings.Contains(msg, db) {
		t.Errorf("stderr does not say that the server exited, with its log naming %s:\n%s", db, msg)
	}
	if _, err := os.Stat(filepath.Join(dataDir, autostart.PIDFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the pid file of the exited server is left (%v)", err)
	}
}

// failsAtOnce runs a bridge whose client stays (stdin held open) and
// returns its stderr, failing the test unless it exits non-zero within
// 10 s having written nothing on stdout, the MCP channel.
func failsAtOnce(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	took := e2etest.ExitsNonZero(t, cmd, 60*time.Second)
	if t.Failed() {
		t.Logf("stderr:\n%s", &stderr)
	}
	if took > 10*time.Second {
		t.Errorf("mcp-bridge took %s to fail, want at once", took.Round(time.Millisecond))
	}
	if stdout.Len() > 0 {
		t.Errorf("mcp-bridge wrote %q to stdout, the MCP channel", stdout.String())
	}
	return strings.TrimSpace(stderr.String())
}

// executableCopy copies the binary at path into a directory anyone may
// enter, for a child run as another user.
func executableCopy(t *testing.T, path string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pwproxy-bridge-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(dir, filepath.Base(path))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestHelp: asked for help, the real bridge prints its usage with the
// variables it reads on stdout and exits 0, without waiting for a server.
func TestHelp(t *testing.T) {
	_, bridgeBin := binaries(t)
	for _, arg := range []string{"--help", "-h", "help"} {
		t.Run(arg, func(t *testing.T) {
			cmd := exec.Command(bridgeBin, arg)
			cmd.Env = append(os.Environ(), "MCP_PROXY_URL=http://127.0.0.1:"+e2etest.FreePort(t))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("mcp-bridge %s: %v\nstderr:\n%s", arg, err, &stderr)
			}
			if stderr.Len() > 0 {
				t.Errorf("help wrote to stderr:\n%s", &stderr)
			}
			for _, s := range []string{"MCP_PROXY_URL=", "MCP_PROXY_TOKEN=", "MCP_PROXY_AUTOSTART=", "MCP_PROXY_RETRY_TIMEOUT=", "MCP_PROXY_LOG_LEVEL=", "MCP_PROXY_TOOLSETS=", "--toolsets", "PROXY_DATABASE_PATH=", "MCP_PROXY_PROFILE=", "--profile"} {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("help lacks %s:\n%s", s, &stdout)
				}
			}
		})
	}
}
