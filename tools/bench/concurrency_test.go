package main

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
)

// TestConcurrencyFlags: -pages chooses the pages the loop uses; the default
// stays the memory scenario's catalogue + form mix.
func TestConcurrencyFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"default: the catalogue and form mix", nil, []string{"catalogue", "form"}},
		{"the light page alone", []string{"-pages", "form"}, []string{"form"}},
		{"spaces around names", []string{"-pages", "form, table"}, []string{"form", "table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg bench.ConcurrencyConfig
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			cfg.Flags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Check(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Pages); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
			if cfg.Duration != 60*time.Second {
				t.Errorf("duration = %s, want the default 60s", cfg.Duration)
			}
		})
	}
}

// TestConcurrencyFlagErrors: bad flags are refused before anything runs.
func TestConcurrencyFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown page", []string{"concurrency", "-pages", "form,nope"}, `"nope"`},
		{"empty page list", []string{"concurrency", "-pages", ""}, "-pages"},
		{"trailing comma", []string{"concurrency", "-pages", "form,"}, "-pages"},
		{"zero duration", []string{"concurrency", "-duration", "0s"}, "-duration"},
		{"level 0", []string{"concurrency", "-levels", "0"}, "-levels"},
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
