package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestTokensFlagErrors: bad task lists are refused before anything starts,
// in `bench tokens` and in `bench all`.
func TestTokensFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown task", []string{"tokens", "-tasks", "shop,nope"}, `unknown task "nope"`},
		{"empty name", []string{"tokens", "-tasks", "shop,,link"}, "empty task name"},
		{"twice", []string{"tokens", "-tasks", "shop,shop"}, "given twice"},
		{"in bench all", []string{"all", "-tokens-tasks", "nope"}, `unknown task "nope"`},
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
