package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/coder/websocket"
	"image/jpeg"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
)

// LiveConfig configures the live view scenario: what one viewer of a
// session's live view (GET /sessions/{id}/live) gets and costs over Window
// on a still page and a busy page, and the latency of Changes colour flips.
type LiveConfig struct {
	Server         ServerConfig
	Window         time.Duration
	Changes        int
	RequestTimeout time.Duration
}

func (c *LiveConfig) Flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.Window, "window", 10*time.Second, "how long each viewer watches the still and the busy page")
	fs.IntVar(&c.Changes, "changes", 20, "colour flips timed for change-to-frame")
}

func (c *LiveConfig) Check() error {
	if c.Window < time.Second || c.Window > 10*time.Minute {
		return fmt.Errorf("-window %s: want 1s..10m", c.Window)
	}
	if c.Changes < 1 || c.Changes > 600 {
		return fmt.Errorf("-changes %d: want 1..600", c.Changes)
	}
	return nil
}

// LiveResult is the result of the live view scenario. Baseline is the CPU
// over a window with the busy page open and no viewer; ViewerCores what the
// viewer of the busy page costs (server tree cores with it minus without).
// Latency is change-to-frame: from the whole second at which the page flips
// its colour to the first frame showing the new one; Missed the flips no
// frame showed before the next.
type LiveResult struct {
	Env         map[string]string `json:"env"`
	Still       LiveWatch         `json:"still"`
	Busy        LiveWatch         `json:"busy"`
	Baseline    CPUUsage          `json:"baseline_cpu"`
	ViewerCores float64           `json:"viewer_cores"`
	Latency     Summary           `json:"change_to_frame"`
	Missed      int               `json:"missed_changes"`
	Cleanup     StopReport        `json:"cleanup"`
	Interrupted bool              `json:"interrupted,omitempty"`
}

// LiveWatch is one viewer's window on one page; FPS and BytesPerSec are the
// medians of its 1 s windows.
type LiveWatch struct {
	Seconds     float64  `json:"seconds"`
	Frames      int      `json:"frames"`
	Bytes       int64    `json:"bytes"`
	FPS         float64  `json:"fps_median"`
	BytesPerSec float64  `json:"bytes_per_s_median"`
	CPU         CPUUsage `json:"cpu"`
}

// registerLivePages serves the scenario's pages: one that does not change,
// one that changes all the time (an animation and a counter), and one whose
// whole viewport is red on even seconds of the wall clock, blue on odd ones.
func registerLivePages(mux *http.ServeMux, serve func(string) http.HandlerFunc) {
	mux.HandleFunc("GET /live/still", serve(page("Still", `<p>Nothing here moves.</p>`)))
	mux.HandleFunc("GET /live/busy", serve(page("Busy",
		`<style>@keyframes spin{to{transform:rotate(360deg)}}#box{width:240px;height:240px;background:#2e6bd1;animation:spin 2s linear infinite}</style>`+
			`<div id="box"></div><p id="n">0</p>`+
			`<script>let n=0;setInterval(()=>{document.getElementById('n').textContent=String(++n)},50)</script>`)))
	mux.HandleFunc("GET /live/flip", serve(page("Flip",
		`<div id="b" style="position:fixed;inset:0"></div>`+
			`<script>const b=document.getElementById('b');`+
			`function paint(){const s=Math.floor(Date.now()/1000);b.style.background=s%2?'rgb(0,0,255)':'rgb(255,0,0)';setTimeout(paint,1000-Date.now()%1000)}paint()</script>`)))
}

func RunLive(ctx context.Context, log *slog.Logger, site *Site, cfg LiveConfig) (res *LiveResult, err error) {
	res = &LiveResult{Env: cfg.Server.Env}
	srv, c, stop, err := serve(ctx, log, cfg.Server, cfg.RequestTimeout, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop()
	var ids []string
	defer func() { closeAll(ctx, log, c, ids) }()
	for _, p := range []string{"still", "busy", "flip"} {
		s, err := c.CreateSession(ctx)
		if err != nil {
			return res, fmt.Errorf("POST /sessions: %w", err)
		}
		ids = append(ids, s.ID)
		if _, err := c.Call(ctx, s.ID, "browser_navigate", map[string]any{"url": site.URL + "/live/" + p}); err != nil {
			return res, fmt.Errorf("browser_navigate /live/%s: %w", p, err)
		}
	}
	if err := sleepCtx(ctx, 3*time.Second); err != nil {
		return res, err
	}
	mark := markCPU(srv.PID)
	if err := sleepCtx(ctx, cfg.Window); err != nil {
		return res, err
	}
	res.Baseline = cpuSince(mark, markCPU(srv.PID))
	for i, into := range []*LiveWatch{&res.Still, &res.Busy} {
		frames, cpu, err := watch(ctx, srv, c, ids[i], cfg.Window)
		if err != nil {
			return res, fmt.Errorf("watching the %s page: %w", []string{"still", "busy"}[i], err)
		}
		*into = summarizeWatch(frames, cfg.Window, cpu)
	}
	res.ViewerCores = res.Busy.CPU.ServerCores - res.Baseline.ServerCores
	// Whole seconds from the next but one on, so that the screencast has
	// started; one more second so the last flip has its own second.
	frames, _, err := watch(ctx, srv, c, ids[2], time.Duration(cfg.Changes+3)*time.Second)
	if err != nil {
		return res, fmt.Errorf("watching the flip page: %w", err)
	}
	lat, missed, err := flipLatencies(frames, cfg.Changes)
	if err != nil {
		return res, err
	}
	res.Latency, res.Missed = Summarize(lat), missed
	return res, nil
}

type liveFrame struct {
	at    time.Time // arrival
	size  int       // the message's bytes
	jpeg  []byte
	start time.Time // when the viewer connected
}

// watch is one viewer on session id's live view for d: every frame it got,
// and the server's CPU over the window.
func watch(ctx context.Context, srv *Server, c *Client, id string, d time.Duration) ([]liveFrame, CPUUsage, error) {
	hdr := http.Header{"Origin": []string{srv.URL}}
	if c.token != "" {
		hdr.Set("Authorization", "Bearer "+c.token)
	}
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/sessions/" + id + "/live"
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, _, err := websocket.Dial(dctx, wsURL, &websocket.DialOptions{HTTPHeader: hdr, HTTPClient: c.http})
	cancel()
	if err != nil {
		return nil, CPUUsage{}, fmt.Errorf("GET /sessions/%s/live: %w", id, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	start, mark := time.Now(), markCPU(srv.PID)
	wctx, stop := context.WithDeadline(ctx, start.Add(d))
	defer stop()
	var frames []liveFrame
	for {
		_, b, err := conn.Read(wctx)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				break // the window is over
			}
			return frames, CPUUsage{}, fmt.Errorf("reading the live view: %w", err)
		}
		at := time.Now()
		var m struct {
			Type    string `json:"type"`
			Data    []byte `json:"data"` // base64 in the JSON
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return frames, CPUUsage{}, fmt.Errorf("a live view message is not JSON: %w", err)
		}
		switch m.Type {
		case "frame":
			frames = append(frames, liveFrame{at: at, size: len(b), jpeg: m.Data, start: start})
		case "error":
			return frames, CPUUsage{}, fmt.Errorf("the live view said %s: %s", m.Code, m.Message)
		}
	}
	cpu := cpuSince(mark, markCPU(srv.PID))
	_ = conn.Close(websocket.StatusNormalClosure, "")
	return frames, cpu, nil
}

// summarizeWatch counts frames and bytes in the whole 1 s windows of d.
func summarizeWatch(frames []liveFrame, d time.Duration, cpu CPUUsage) LiveWatch {
	n := int(d / time.Second)
	w := LiveWatch{Seconds: d.Seconds(), CPU: cpu}
	fps, bps := make([]float64, n), make([]float64, n)
	for _, f := range frames {
		w.Frames++
		w.Bytes += int64(f.size)
		if i := int(f.at.Sub(f.start) / time.Second); i < n {
			fps[i]++
			bps[i] += float64(f.size)
		}
	}
	w.FPS, w.BytesPerSec = Percentile(fps, 50), Percentile(bps, 50)
	return w
}

// flipLatencies times the colour flips: for each whole second S after the
// first whole second of the watch, the first frame arriving at or after S
// that shows S's colour. A flip no frame shows before S+1 is missed.
func flipLatencies(frames []liveFrame, changes int) (lat []float64, missed int, err error) {
	if len(frames) == 0 {
		return nil, changes, errors.New("no frame of the flipping page")
	}
	first := frames[0].start.Truncate(time.Second).Add(2 * time.Second)
	colours := make([]string, len(frames))
	for i, f := range frames {
		if colours[i], err = frameColour(f.jpeg); err != nil {
			return nil, 0, err
		}
	}
	for k := range changes {
		s := first.Add(time.Duration(k) * time.Second)
		want := [2]string{"red", "blue"}[s.Unix()%2]
		seen := false
		for i, f := range frames {
			if f.at.Before(s) || !f.at.Before(s.Add(time.Second)) {
				continue
			}
			if colours[i] == want {
				lat = append(lat, ms(f.at.Sub(s)))
				seen = true
				break
			}
		}
		if !seen {
			missed++
		}
	}
	return lat, missed, nil
}

// frameColour is "red", "blue" or "other", by the frame's centre.
func frameColour(b []byte) (string, error) {
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("a frame is not a JPEG: %w", err)
	}
	r := img.Bounds()
	cr, _, cb, _ := img.At(r.Min.X+r.Dx()/2, r.Min.Y+r.Dy()/2).RGBA()
	red, blue := int(cr>>8), int(cb>>8)
	switch {
	case red > blue+100:
		return "red", nil
	case blue > red+100:
		return "blue", nil
	}
	return "other", nil
}

func (r *LiveResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== live: one viewer of GET /sessions/{id}/live at a time, %.0f s each (frames and bytes: medians of 1 s windows); env %v\n", r.Still.Seconds, r.Env)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "page\tframes\tframes/s\tKB/s\tgo/node/chromium cores\tmachine busy\t")
	row := func(name string, cpu CPUUsage, lw *LiveWatch) {
		frames, fps, kbs := "-", "-", "-"
		if lw != nil {
			frames, fps, kbs = fmt.Sprint(lw.Frames), fmt.Sprintf("%.1f", lw.FPS), fmt.Sprintf("%.0f", lw.BytesPerSec/1024)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f/%.2f/%.2f\t%.2f\t\n", name, frames, fps, kbs,
			cpu.ServerByFamily["proxy-server"], cpu.ServerByFamily["node"], cpu.ServerByFamily["chromium"], cpu.MachineBusyCores)
	}
	row("busy, no viewer", r.Baseline, nil)
	row("still", r.Still.CPU, &r.Still)
	row("busy", r.Busy.CPU, &r.Busy)
	tw.Flush()
	fmt.Fprintf(w, "one viewer of the busy page costs %.2f cores (proxy-server, node and Chromium, with it minus without)\n", r.ViewerCores)
	fmt.Fprintf(w, "change to frame: median %.0f ms, p95 %.0f ms, max %.0f ms over %d flips; %d missed\n",
		r.Latency.Median, r.Latency.P95, r.Latency.Max, r.Latency.N, r.Missed)
	writeCleanup(w, r.Cleanup)
	fmt.Fprintln(w)
}
