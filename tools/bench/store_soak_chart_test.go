package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChartCommand draws the charts of the fixtures in internal/bench.
func TestChartCommand(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := NewMain(&stdout, &stderr).Run(context.Background(), []string{"chart",
		"-concurrency", filepath.Join("internal", "bench", "testdata", "concurrency.json"),
		"-soak", filepath.Join("internal", "bench", "testdata", "soak.json"),
		"-out", out})
	if err != nil {
		t.Fatalf("bench chart: %v\n%s", err, stderr.String())
	}
	want := []string{"concurrency-latency-catalogue.svg", "concurrency-latency-form.svg", "concurrency-memory.svg",
		"concurrency-throughput.svg", "soak-fds.svg", "soak-memory.svg"}
	es, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if n := strings.Count(stdout.String(), "\n"); n != len(want) {
		t.Errorf("stdout lists %d paths, want %d:\n%s", n, len(want), stdout.String())
	}
}

// TestFlagErrors checks that bad flags of store, soak, overhead and chart are
// refused before anything runs.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"store: zero duration", []string{"store", "-duration", "0s"}, "-duration"},
		{"store: no writers", []string{"store", "-writers", "0"}, "-writers"},
		{"store: negative readers", []string{"store", "-readers", "-1"}, "-readers"},
		{"store: no iterations", []string{"store", "-n", "0"}, "-n"},
		{"store: argument", []string{"store", "extra"}, "takes no arguments"},
		{"soak: interval longer than duration", []string{"soak", "-duration", "1m", "-interval", "2m"}, "-interval"},
		{"soak: too short idle timeout", []string{"soak", "-idle", "100ms"}, "-idle"},
		{"soak: probability", []string{"soak", "-long-pause", "1.5"}, "-long-pause"},
		{"soak: unknown page", []string{"soak", "-pages", "catalogue,nope"}, "nope"},
		{"soak: no sessions", []string{"soak", "-sessions", "0"}, "-sessions"},
		{"soak: no readings", []string{"soak", "-readings", "0"}, "-readings"},
		{"soak: readings closer than a second", []string{"soak", "-interval", "5s", "-duration", "1m", "-readings", "10"}, "-readings"},
		{"overhead: no rounds", []string{"overhead", "-n", "0"}, "-n 0"},
		{"memory: one count", []string{"memory", "-sessions", "16"}, "-sessions"},
		{"memory: unknown page", []string{"memory", "-page", "nope"}, "-page"},
		{"chart: no input", []string{"chart"}, "-concurrency"},
		{"chart: missing file", []string{"chart", "-concurrency", "/nonexistent/c.json"}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := NewMain(&stdout, &stderr).Run(context.Background(), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run(%q) = %v, want an error mentioning %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestChartCommandWrongReport: a soak report given as -concurrency has no
// levels to draw.
func TestChartCommandWrongReport(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := NewMain(&stdout, &stderr).Run(context.Background(), []string{"chart",
		"-concurrency", filepath.Join("internal", "bench", "testdata", "soak.json"), "-out", t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "no concurrency levels") {
		t.Errorf("err = %v, want \"no concurrency levels\"", err)
	}
}
