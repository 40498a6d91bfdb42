package metrics

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
)

// scrapeText fetches /metrics and parses it as the Prometheus text format.
func scrapeText(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics = %d", rec.Code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return fams
}

// value finds the metric with the given labels (nil: the only one).
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		if labels != nil && !cmp.Equal(got, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no %s with labels %v", name, labels)
	return 0
}

func TestMetricsMoveWithTraffic(t *testing.T) {
	stats := session.Stats{SessionsCreated: 2, WorkerRestarts: 1}
	m := New(Sources{
		Sessions: func(context.Context) ([]*proxy.Session, error) {
			return []*proxy.Session{{State: proxy.SessionActive}, {State: proxy.SessionSuspended}, {State: proxy.SessionActive}}, nil
		},
		Stats:          func() session.Stats { return stats },
		BrowserCrashes: func() int64 { return 1 },
		Breaker:        func(context.Context) error { return errors.New("open") },
		DatabaseBytes:  func(context.Context) (int64, error) { return 4096, nil },
	})
	m.ObserveCall("browser_navigate", "success", 300*time.Millisecond, 50000, 400)
	m.ObserveCall("browser_navigate", "error", 10*time.Millisecond, 100, 300)
	before := scrapeText(t, m)

	m.ObserveCall("browser_navigate", "success", 200*time.Millisecond, 60000, 400)
	stats.SessionsCreated = 3
	after := scrapeText(t, m)

	tests := []struct {
		name   string
		labels map[string]string
		before float64
		after  float64
	}{
		{"pwproxy_tool_calls_total", map[string]string{"tool": "browser_navigate", "status": "success"}, 1, 2},
		{"pwproxy_tool_calls_total", map[string]string{"tool": "browser_navigate", "status": "error"}, 1, 1},
		{"pwproxy_tool_call_duration_seconds", map[string]string{"tool": "browser_navigate"}, 2, 3},
		{"pwproxy_bytes_stored_total", nil, 50100, 110100},
		{"pwproxy_bytes_returned_total", nil, 700, 1100},
		{"pwproxy_sessions", map[string]string{"state": "active"}, 2, 2},
		{"pwproxy_sessions", map[string]string{"state": "suspended"}, 1, 1},
		{"pwproxy_sessions_created_total", nil, 2, 3},
		{"pwproxy_worker_restarts_total", nil, 1, 1},
		{"pwproxy_browser_crashes_total", nil, 1, 1},
		{"pwproxy_circuit_breaker_open", nil, 1, 1},
		{"pwproxy_database_bytes", nil, 4096, 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := value(t, before, tt.name, tt.labels); got != tt.before {
				t.Errorf("before: %s%v = %v, want %v", tt.name, tt.labels, got, tt.before)
			}
			if got := value(t, after, tt.name, tt.labels); got != tt.after {
				t.Errorf("after: %s%v = %v, want %v", tt.name, tt.labels, got, tt.after)
			}
		})
	}
}
