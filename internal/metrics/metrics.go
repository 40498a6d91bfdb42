// Package metrics owns proxy-server's Prometheus metrics (/metrics): it
// counts tool calls as they end (forwarded or refused) and, on each scrape,
// reads the session manager, the browser host and the database. It must
// never slow a call down (observing is a few atomic adds and a histogram
// bucket) nor write anything; it uses its own registry, never the global one.
package metrics

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
)

const namespace = "pwproxy"

// Sources are what a scrape reads.
type Sources struct {
	// Sessions lists every session (their states are counted).
	Sessions func(ctx context.Context) ([]*proxy.Session, error)
	// Stats are the session manager's counters.
	Stats func() session.Stats
	// BrowserCrashes counts unplanned exits of the browsers the proxy runs.
	BrowserCrashes func() int64
	// Breaker reports an open circuit breaker as an error.
	Breaker func(ctx context.Context) error
	// DatabaseBytes is the size of the SQLite database.
	DatabaseBytes func(ctx context.Context) (int64, error)
	// Nodes lists the browser nodes (PROXY_BROWSER_ENDPOINTS).
	Nodes func() []proxy.Node
}

// Metrics is the registry and the call instruments. It implements
// session.Observer.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	stored   prometheus.Counter
	returned prometheus.Counter
}

// New registers every metric; src fields may be nil (the metric is then
// left out).
func New(src Sources) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "tool_calls_total",
			Help: "Tool calls by tool and outcome: success, error (the tool failed in the browser) or the proxy error code, including calls refused before they reached the browser (DOMAIN_BLOCKED, INVALID_PARAMETERS, TOOL_NOT_FOUND…). Tools the server does not know count as tool=\"unknown\"."},
			[]string{"tool", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "tool_call_duration_seconds",
			Help:    "Latency of tool calls forwarded to upstream, inside proxy-server, from the call to the recorded answer (refused calls are not timed).",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}},
			[]string{"tool"}),
		stored: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "bytes_stored_total",
			Help: "Bytes of upstream answers stored (results, snapshots, console logs)."}),
		returned: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "bytes_returned_total",
			Help: "Bytes of call answers returned to the model; against bytes_stored_total it is the context saved."}),
	}
	m.reg.MustRegister(m.calls, m.duration, m.stored, m.returned,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newScrape(src))
	m.reg.MustRegister(sqliteAllocator()...)
	return m
}

// Handler serves the metrics in the Prometheus text format on GET and HEAD;
// any other method gets 405 with the API's documented error body
// (INVALID_PARAMETERS), like every other read-only endpoint.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": proxy.EINVALID,
				"message": "method " + r.Method + " is not allowed on " + r.URL.Path + ": use GET", "retryable": false})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ObserveCall implements session.Observer: a call forwarded to a worker.
func (m *Metrics) ObserveCall(tool, status string, d time.Duration, stored, returned int) {
	m.calls.WithLabelValues(tool, status).Inc()
	m.duration.WithLabelValues(tool).Observe(d.Seconds())
	m.stored.Add(float64(max(stored, 0)))
	m.returned.Add(float64(max(returned, 0)))
}

// ObserveRefused implements session.Observer: a call refused before it
// reached a worker counts in tool_calls_total under its error code. The
// session manager passes tool "unknown" for names it does not know, which
// keeps the label values bounded.
func (m *Metrics) ObserveRefused(tool, code string) {
	m.calls.WithLabelValues(tool, code).Inc()
}

// scrape reads the sources when Prometheus asks.
type scrape struct {
	src                            Sources
	sessions, db, breaker, browser *prometheus.Desc
	nodeUp, nodeSessions           *prometheus.Desc
	nodeCapacity, nodeFailures     *prometheus.Desc
	sessionMemory                  *prometheus.Desc
	stats                          map[string]*prometheus.Desc
}

func newScrape(src Sources) *scrape {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(namespace+"_"+name, help, labels, nil)
	}
	return &scrape{
		src:          src,
		sessions:     desc("sessions", "Sessions by state.", "state"),
		db:           desc("database_bytes", "Size of the SQLite database."),
		breaker:      desc("circuit_breaker_open", "1 while worker starts fail fast."),
		browser:      desc("browser_crashes_total", "Unplanned exits of the shared browser (each is relaunched)."),
		nodeUp:       desc("node_up", "1 while a browser node answers its probes; a draining node answers but takes nothing new.", "node", "state"),
		nodeSessions: desc("node_sessions", "Workers placed on a browser node: sessions and spare workers.", "node"),
		nodeCapacity: desc("node_capacity", "Sessions a browser node may hold (its endpoint's max=).", "node"),
		nodeFailures: desc("node_probe_failures_total", "Failed probes of a browser node.", "node"),
		sessionMemory: desc("session_memory_bytes", "Resident memory of each live session: kind=worker (its worker's node process), "+
			"renderers (its renderer processes in the shared browser, or its own browser in per-session mode), total. Sums of per-process RSS.", "session_id", "kind"),
		stats: map[string]*prometheus.Desc{
			"sessions_created":  desc("sessions_created_total", "Sessions created."),
			"sessions_evicted":  desc("sessions_evicted_total", "Idle sessions suspended to make room for another."),
			"sessions_restored": desc("sessions_restored_total", "Sessions brought back in a new worker with their saved state."),
			"sessions_failed":   desc("sessions_failed_total", "Sessions put in the error state after repeated worker crashes."),
			"worker_crashes":    desc("worker_crashes_total", "Workers that died under a session."),
			"worker_restarts":   desc("worker_restarts_total", "Workers replaced after a crash."),
			"workers_hung":      desc("workers_hung_total", "Workers killed for not answering pings (each session of a session host killed for that counts one)."),
			"state_saves":       desc("state_saves_total", "Browser states saved for crash recovery."),
		},
	}
}

func (s *scrape) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.sessions
	ch <- s.db
	ch <- s.breaker
	ch <- s.browser
	ch <- s.nodeUp
	ch <- s.nodeSessions
	ch <- s.nodeCapacity
	ch <- s.nodeFailures
	ch <- s.sessionMemory
	for _, d := range s.stats {
		ch <- d
	}
}

func (s *scrape) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.src.Sessions != nil {
		if ss, err := s.src.Sessions(ctx); err == nil {
			counts := map[proxy.SessionState]int{proxy.SessionActive: 0, proxy.SessionSuspended: 0, proxy.SessionClosed: 0, proxy.SessionError: 0}
			for _, x := range ss {
				counts[x.State]++
				if m := x.Memory; m != nil {
					ch <- prometheus.MustNewConstMetric(s.sessionMemory, prometheus.GaugeValue, float64(m.WorkerBytes), x.ID, "worker")
					ch <- prometheus.MustNewConstMetric(s.sessionMemory, prometheus.GaugeValue, float64(m.RendererBytes), x.ID, "renderers")
					ch <- prometheus.MustNewConstMetric(s.sessionMemory, prometheus.GaugeValue, float64(m.TotalBytes), x.ID, "total")
				}
			}
			for st, n := range counts {
				ch <- prometheus.MustNewConstMetric(s.sessions, prometheus.GaugeValue, float64(n), string(st))
			}
		}
	}
	if s.src.DatabaseBytes != nil {
		if n, err := s.src.DatabaseBytes(ctx); err == nil {
			ch <- prometheus.MustNewConstMetric(s.db, prometheus.GaugeValue, float64(n))
		}
	}
	if s.src.Breaker != nil {
		open := 0.0
		if s.src.Breaker(ctx) != nil {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(s.breaker, prometheus.GaugeValue, open)
	}
	if s.src.BrowserCrashes != nil {
		ch <- prometheus.MustNewConstMetric(s.browser, prometheus.CounterValue, float64(s.src.BrowserCrashes()))
	}
	if s.src.Nodes != nil {
		for _, n := range s.src.Nodes() {
			up := 0.0
			if n.State != proxy.NodeDown {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(s.nodeUp, prometheus.GaugeValue, up, n.ID, string(n.State))
			ch <- prometheus.MustNewConstMetric(s.nodeSessions, prometheus.GaugeValue, float64(n.Sessions), n.ID)
			ch <- prometheus.MustNewConstMetric(s.nodeCapacity, prometheus.GaugeValue, float64(n.Capacity), n.ID)
			ch <- prometheus.MustNewConstMetric(s.nodeFailures, prometheus.CounterValue, float64(n.Failures), n.ID)
		}
	}
	if s.src.Stats != nil {
		st := s.src.Stats()
		for name, v := range map[string]int64{
			"sessions_created": st.SessionsCreated, "sessions_evicted": st.SessionsEvicted, "sessions_restored": st.SessionsRestored,
			"sessions_failed": st.SessionsFailed, "worker_crashes": st.WorkerCrashes, "worker_restarts": st.WorkerRestarts,
			"workers_hung": st.WorkersHung, "state_saves": st.StateSaves,
		} {
			ch <- prometheus.MustNewConstMetric(s.stats[name], prometheus.CounterValue, float64(v))
		}
	}
}
