package upstream

import (
	"os"
	"slices"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// workerArgs builds the worker's argv after the command prefix.
func workerArgs(cfg WorkerConfig, outputDir string) ([]string, error) {
	args := []string{"--isolated", "--output-dir", outputDir, "--file-paths", "absolute"}
	switch {
	case cfg.Remote != nil:
		// The remote browser is named in the configuration file below.
	case cfg.PlaywrightEndpoint != "":
		args = append(args, "--endpoint", cfg.PlaywrightEndpoint)
	case cfg.CDPEndpoint != "":
		args = append(args, "--cdp-endpoint", cfg.CDPEndpoint)
		if !hasFlag(cfg.ExtraArgs, "--cdp-timeout") {
			// Upstream's 30 s default is too short when many workers attach
			// to one busy browser at once: each connect attaches to every
			// existing target, so it slows as sessions are added.
			args = append(args, "--cdp-timeout", "120000")
		}
	default:
		args = append(args, "--headless")
		if !hasFlag(cfg.ExtraArgs, "--executable-path") {
			exe, err := FindBrowser()
			if err != nil {
				return nil, err
			}
			args = append(args, "--executable-path", exe)
		}
		if os.Geteuid() == 0 && !hasFlag(cfg.ExtraArgs, "--no-sandbox") {
			args = append(args, "--no-sandbox")
		}
	}
	if !hasFlag(cfg.ExtraArgs, worker.IdleTimeoutFlag) {
		// Upstream closes a headless browser it launched after an hour
		// without a call (pings do not count), and would detach from an
		// attached one with a timeout set in its environment: a session the
		// proxy keeps would silently lose its pages and cookies. The
		// proxy's own idle policy (PROXY_SESSION_IDLE_TIMEOUT) is the only
		// one; 0 switches upstream's off.
		args = append(args, worker.IdleTimeoutFlag+"=0")
	}
	if needsConfig(cfg) {
		args = append(args, "--config", configPath(outputDir))
	}
	if cfg.Browser != "" && cfg.Browser != proxy.BrowserChromium {
		// Connecting to a node's server needs the client of its engine.
		args = append(args, "--browser", cfg.Browser)
	}
	caps, extra := splitCaps(cfg.ExtraArgs)
	args = append(args, "--caps="+strings.Join(mergeCaps([]string{"storage"}, caps), ","))
	return append(args, extra...), nil
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// splitCaps pulls every --caps value out of args: commander keeps only the
// last --caps, so a user's --caps=network would silently drop our storage.
func splitCaps(args []string) (caps, rest []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--caps" && i+1 < len(args):
			caps = append(caps, strings.Split(args[i+1], ",")...)
			i++
		case strings.HasPrefix(a, "--caps="):
			caps = append(caps, strings.Split(strings.TrimPrefix(a, "--caps="), ",")...)
		default:
			rest = append(rest, a)
		}
	}
	return caps, rest
}

func mergeCaps(base, more []string) []string {
	out := slices.Clone(base)
	for _, c := range more {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
