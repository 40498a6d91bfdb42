package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// startNodes starts n browser nodes of the server's binary on loopback
// ports, each taking up to capacity sessions, and returns their
// PROXY_BROWSER_ENDPOINTS, their pids and a function that stops them all.
func startNodes(ctx context.Context, log *slog.Logger, s ServerConfig, n, capacity int) (string, []int, func(), error) {
	var nodes []*proctest.Node
	stop := func() {
		for _, nd := range nodes {
			if nd.Stop(10 * time.Second) {
				log.Warn("browser node killed after its stop timeout", "pid", nd.PID)
			}
		}
	}
	var eps []string
	var pids []int
	for i := range n {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		nd, err := proctest.StartNode(sctx, s.Binary, s.Dir, "127.0.0.1:0", "", nil)
		cancel()
		if err != nil {
			stop()
			return "", nil, nil, err
		}
		nodes = append(nodes, nd)
		pids = append(pids, nd.PID)
		eps = append(eps, fmt.Sprintf("%s#name=node-%d&max=%d", nd.Endpoint, i+1, capacity))
		log.Info("browser node started", "node", i+1, "endpoint", nd.Endpoint, "pid", nd.PID)
	}
	return strings.Join(eps, ","), pids, stop, nil
}

// NodesConfig is the nodes scenario: the concurrency scenario at one level,
// once per count of local browser nodes (0: the server's own browser).
type NodesConfig struct {
	Concurrency ConcurrencyConfig
	Counts      []int
}

type NodesResult struct {
	Runs []*ConcurrencyResult `json:"runs"`
}

func (c *NodesConfig) Flags(fs *flag.FlagSet) {
	c.Concurrency.Flags(fs)
	for name, def := range map[string]string{"levels": "6", "duration": "30s"} {
		_ = fs.Set(name, def)
		fs.Lookup(name).DefValue = def
	}
	c.Counts = []int{0, 1, 2, 3}
	fs.Var((*IntList)(&c.Counts), "counts", "numbers of browser nodes to compare (0: the server's own browser)")
}

func (c *NodesConfig) Check() error { return c.Concurrency.Check() }

func RunNodes(ctx context.Context, log *slog.Logger, site *Site, cfg NodesConfig) (*NodesResult, error) {
	res := &NodesResult{}
	for _, n := range cfg.Counts {
		c := cfg.Concurrency
		c.Nodes = n
		run, err := RunConcurrency(ctx, log.With("nodes", n), site, c)
		if run != nil {
			res.Runs = append(res.Runs, run)
		}
		if err != nil {
			return res, fmt.Errorf("%d nodes: %w", n, err)
		}
	}
	return res, nil
}

func (r *NodesResult) writeText(w io.Writer) {
	fmt.Fprintln(w, "== nodes: the concurrency loop at the same load on the server's own browser (0) and on 1, 2, 3 browser nodes on this machine; the nodes share its CPUs, so this is the cost of placement and of the remote protocol, not added capacity")
	tw := newTable(w, "nodes\tsessions\tok calls/s\terrors\tnavigate p50 / p95 ms\tsnapshot p50 / p95\tclick p50 / p95\t")
	for _, run := range r.Runs {
		for _, l := range run.Levels {
			// Latencies on the run's first page (the heavy one by default).
			lat := map[string]string{}
			for _, t := range l.Tools {
				if t.Page == "" || len(run.Pages) > 0 && t.Page == run.Pages[0] {
					lat[t.Tool] = fmt.Sprintf("%s / %s", f0(t.Latency.Median), f0(t.Latency.P95))
				}
			}
			fmt.Fprintf(tw, "%d\t%d\t%.2f\t%d\t%s\t%s\t%s\t\n", run.Nodes, l.Level, l.CallsPerSec, l.ErrorCount,
				lat["browser_navigate"], lat["browser_snapshot"], lat["browser_click"])
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
}
