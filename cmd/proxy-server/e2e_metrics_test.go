//go:build unix

package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// metricsOf scrapes /metrics and parses it as the Prometheus text format.
func metricsOf(t *testing.T, s *server) map[string]*dto.MetricFamily {
	t.Helper()
	var text string
	if code := do(t, "GET", s.URL+"/metrics", nil, &text); code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return fams
}

// matching is the family's metrics whose labels include want.
func matching(fams map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	var out []*dto.Metric
next:
	for _, m := range f.Metric {
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// sample sums the family's samples whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var sum float64
	for _, m := range matching(fams, name, want) {
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		}
	}
	return sum
}

// histogramCount sums the observation counts of the histograms whose labels
// include want.
func histogramCount(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var sum float64
	for _, m := range matching(fams, name, want) {
		if h := m.Histogram; h != nil {
			sum += float64(h.GetSampleCount())
		}
	}
	return sum
}

// labelValues is every value label takes in the family.
func labelValues(fams map[string]*dto.MetricFamily, name, label string) map[string]bool {
	out := map[string]bool{}
	for _, m := range matching(fams, name, nil) {
		for _, l := range m.Label {
			if l.GetName() == label {
				out[l.GetValue()] = true
			}
		}
	}
	return out
}

// TestMetricsMoveWithTraffic makes a session, one forwarded call and two
// refused ones, and checks what /metrics says of them: refused calls count
// in tool_calls_total under their error code (unknown tool names as
// "unknown"), and only the forwarded call is timed.
func TestMetricsMoveWithTraffic(t *testing.T) {
	s := startServer(t, "", map[string]string{"PROXY_BLOCKED_DOMAINS": "blocked.example"})
	pages := site(t)
	before := metricsOf(t, s)
	id := s.createSession(t)
	s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	for _, c := range []struct {
		tool string
		code string
	}{
		{"browser_navigate", proxy.EDOMAINBLOCKED},
		{"browser_teleport_zq9", proxy.ETOOLMISSING},
	} {
		var e proxyErr
		body := map[string]any{"session_id": id, "tool": c.tool, "params": map[string]string{"url": "https://blocked.example/"}}
		if code := do(t, "POST", s.URL+"/call", body, &e); e.Error != c.code {
			t.Fatalf("%s = %d %+v, want %s", c.tool, code, e, c.code)
		}
	}
	after := metricsOf(t, s)

	nav := map[string]string{"tool": "browser_navigate", "status": "success"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		delta  float64
	}{
		{"pwproxy_tool_calls_total", nav, 1},
		{"pwproxy_tool_calls_total", map[string]string{"tool": "browser_navigate", "status": proxy.EDOMAINBLOCKED}, 1},
		{"pwproxy_tool_calls_total", map[string]string{"tool": "unknown", "status": proxy.ETOOLMISSING}, 1},
		{"pwproxy_sessions_created_total", nil, 1},
		{"pwproxy_sessions", map[string]string{"state": "active"}, 1},
	} {
		if d := sample(after, c.name, c.labels) - sample(before, c.name, c.labels); d != c.delta {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, d, c.delta)
		}
	}
	stored := sample(after, "pwproxy_bytes_stored_total", nil)
	returned := sample(after, "pwproxy_bytes_returned_total", nil)
	if stored <= returned || returned == 0 {
		t.Errorf("bytes stored %v, returned %v: want the stored snapshot to outweigh the ref returned", stored, returned)
	}
	if sample(after, "pwproxy_database_bytes", nil) == 0 {
		t.Error("pwproxy_database_bytes is 0")
	}
	if d := histogramCount(after, "pwproxy_tool_call_duration_seconds", map[string]string{"tool": "browser_navigate"}) -
		histogramCount(before, "pwproxy_tool_call_duration_seconds", map[string]string{"tool": "browser_navigate"}); d != 1 {
		t.Errorf("timed browser_navigate calls moved by %v, want 1 (the refused one is not timed)", d)
	}
	if labelValues(after, "pwproxy_tool_calls_total", "tool")["browser_teleport_zq9"] {
		t.Error("an unknown tool name became a label value of pwproxy_tool_calls_total")
	}
}

// TestHealthReportsEveryCheck checks /health on a real server: once healthy
// it is 200 with status ok and a status for every documented check
// (workers, where the server has that check, too).
func TestHealthReportsEveryCheck(t *testing.T) {
	s := startServer(t, "", nil)
	if code := waitHealthy(t, s.URL, 2*time.Minute); code != http.StatusOK {
		var raw string
		do(t, "GET", s.URL+"/health", nil, &raw)
		t.Fatalf("/health = %d, never 200: %s", code, raw)
	}
	var body struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	if code := do(t, "GET", s.URL+"/health", nil, &body); code != http.StatusOK {
		t.Fatalf("/health = %d %+v once healthy", code, body)
	}
	if body.Status != "ok" {
		t.Errorf("/health status = %q, want ok", body.Status)
	}
	got := body.Checks
	want := map[string]string{"database": "ok", "browser": "ok", "upstream": "ok", "sessions": "ok", "circuit_breaker": "ok", "host_memory": "ok"}
	if _, ok := got["workers"]; ok {
		want["workers"] = "ok" // optional check; when present it must report too
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/health checks (-want +got):\n%s", diff)
	}
}
