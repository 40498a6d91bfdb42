package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Memory is what one session's processes hold resident, in bytes. Like RSS,
// it sums per-process RSS, so pages shared between processes count once
// per process.
type Memory struct {
	// WorkerBytes is the worker's node process.
	WorkerBytes int64
	// RendererBytes is the session's part of Chromium: in per-session mode
	// every process of the worker's own browser (browser, renderers, GPU,
	// utilities); with the shared browser, the renderer processes that
	// serve the frames of the session's pages (never the shared browser
	// process, its GPU or its utility processes).
	RendererBytes int64
	// Renderers is how many processes RendererBytes counts.
	Renderers int
}

// Memory measures the worker and its renderers. rendererPIDs are the
// shared browser's renderers of the session's pages (RendererPIDs), read
// earlier: the pids are looked up now, and those gone count nothing. It is
// cheap (the /proc scan is shared for up to a second).
func (w *Worker) Memory(rendererPIDs []int) Memory {
	if w.RSS() == 0 {
		return Memory{} // exited
	}
	// The worker is its node process; whatever else it started is the
	// browser it launched (per-session mode).
	leader, rest, n := splitGroup(w.proc.pid)
	m := Memory{WorkerBytes: leader, RendererBytes: rest, Renderers: n}
	if w.browserServer && len(rendererPIDs) > 0 {
		b, n := pidsRSS(rendererPIDs)
		m.RendererBytes += b
		m.Renderers += n
	}
	return m
}

// SharesBrowser reports whether the worker's pages live in the local
// shared browser, whose renderers RendererPIDs can name.
func (w *Worker) SharesBrowser() bool { return w.browserServer }

// rendererProgram names the renderer processes of every page of the
// worker's browser context. Chromium tells which process renders a frame
// only in a trace: a page-level trace starts with TracingStartedInBrowser,
// which lists the page's frames with their processId. Other contexts'
// pages are never traced, and a renderer never serves two contexts, so the
// pids are the session's own.
const rendererProgram = `async (page) => {
  const pids = new Set();
  for (const p of page.context().pages()) {
    const s = await page.context().newCDPSession(p);
    try {
      const started = [];
      s.on('Tracing.dataCollected', e => { for (const ev of e.value) if (ev.name === 'TracingStartedInBrowser') started.push(ev); });
      const done = new Promise(r => s.once('Tracing.tracingComplete', r));
      await s.send('Tracing.start', { traceConfig: { includedCategories: ['disabled-by-default-devtools.timeline'] }, transferMode: 'ReportEvents' });
      await s.send('Tracing.end');
      await done;
      for (const ev of started)
        for (const f of (ev.args && ev.args.data && ev.args.data.frames) || [])
          if (f.processId) pids.add(f.processId);
    } finally {
      await s.detach().catch(() => {});
    }
  }
  return { pwproxyRenderers: [...pids] };
}`

// RendererPIDs asks the shared browser which renderer processes serve the
// worker's pages. It runs a short trace per page in the worker (a tool call
// of its own, never recorded), so callers sample it, not read it per call;
// it must not run while a call is in flight, and only once the worker's
// browser exists: in a worker that never had a call it would launch one.
// It answers nil without asking when the worker's browser is not the local
// shared one (Memory counts a per-session browser from the process tree).
func (w *Worker) RendererPIDs(ctx context.Context) ([]int, error) {
	if !w.browserServer {
		return nil, nil
	}
	return rendererPIDs(ctx, w)
}

// rendererPIDs runs rendererProgram in w.
func rendererPIDs(ctx context.Context, w stateWorker) ([]int, error) {
	c, err := callTool(ctx, w, runCodeTool, map[string]string{"code": rendererProgram})
	if err != nil {
		return nil, fmt.Errorf("renderer pids: %w", err)
	}
	pids, err := parseRendererPIDs(c.parsed.ResultText)
	if err == nil {
		expireScan()
	}
	return pids, err
}

// runCodeTool runs a Playwright program in the worker.
const runCodeTool = "browser_run_code_unsafe"

// parseRendererPIDs reads rendererProgram's answer out of the ### Result
// text, which upstream writes as the returned value's JSON.
func parseRendererPIDs(result string) ([]int, error) {
	var v struct {
		PIDs []int `json:"pwproxyRenderers"`
	}
	i := strings.Index(result, "{")
	if i < 0 {
		return nil, fmt.Errorf("renderer pids: no answer in %q", tail(result, 200))
	}
	if err := json.NewDecoder(strings.NewReader(result[i:])).Decode(&v); err != nil {
		return nil, fmt.Errorf("renderer pids: %w in %q", err, tail(result, 200))
	}
	if v.PIDs == nil {
		return nil, fmt.Errorf("renderer pids: no answer in %q", tail(result, 200))
	}
	return v.PIDs, nil
}
