package main

import (
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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

// sample sums the family's samples whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var sum float64
	f := fams[name]
	if f == nil {
		return 0
	}
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
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		}
	}
	return sum
}

func TestMetricsMoveWithTraffic(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	before := metricsOf(t, s)
	id := s.createSession(t)
	s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	after := metricsOf(t, s)

	nav := map[string]string{"tool": "browser_navigate", "status": "success"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		delta  float64
	}{
		{"pwproxy_tool_calls_total", nav, 1},
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
}
