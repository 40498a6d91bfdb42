//go:build linux

package upstream

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// findsDebugPort: groupDebugEndpoint can find a per-session browser's port.
const findsDebugPort = true

// groupDebugEndpoint finds the CDP address of the browser in process group
// pgid that was launched with --remote-debugging-port (a per-session
// worker's, which keep-group.js keeps in the worker's group): Chromium
// writes the port it got to DevToolsActivePort in its user data dir,
// which is on its command line. "" when there is none (yet).
func groupDebugEndpoint(pgid int) string {
	_, procs := scanProcs()
	for pid, st := range procs {
		if st.pgid != pgid {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			continue
		}
		var userDataDir string
		debug, child := false, false
		for _, a := range bytes.Split(cmdline, []byte{0}) {
			s := string(a)
			switch {
			case strings.HasPrefix(s, "--type="):
				child = true // a renderer or helper of the browser
			case strings.HasPrefix(s, "--remote-debugging-port="):
				debug = true
			case strings.HasPrefix(s, "--user-data-dir="):
				userDataDir = strings.TrimPrefix(s, "--user-data-dir=")
			}
		}
		if !debug || child || userDataDir == "" {
			continue
		}
		if ep := activePort(userDataDir); ep != "" {
			return ep
		}
	}
	return ""
}

// activePort reads the CDP port Chromium wrote into userDataDir.
func activePort(userDataDir string) string {
	b, err := os.ReadFile(filepath.Join(userDataDir, "DevToolsActivePort"))
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if n, err := strconv.Atoi(strings.TrimSpace(line)); err != nil || n <= 0 || n > 65535 {
		return ""
	}
	return "http://127.0.0.1:" + strings.TrimSpace(line)
}
