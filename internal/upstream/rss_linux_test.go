//go:build linux

package upstream

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

func TestParseStatRSS(t *testing.T) {
	// Real lines from /proc/PID/stat, the second with a comm that holds
	// spaces and a ") " to fool a naive split.
	const plain = "4242 (node) S 4200 4242 4200 0 -1 4194560 12345 0 0 0 100 20 0 0 20 0 11 0 987654 1234567890 35840 18446744073709551615 1 1 0 0 0 0 0 4096 17922 0 0 0 17 3 0 0 0 0 0"
	const tricky = "4243 (a) b (c) S 4242 4242 4200 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987655 1000 7 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0"
	tests := []struct {
		name     string
		stat     string
		wantPPID int
		wantPGID int
		want     int64
		wantOK   bool
	}{
		{"plain", plain, 4200, 4242, 35840, true},
		{"comm with spaces and parentheses", tricky, 4242, 4242, 7, true},
		{"truncated before rss", "4242 (node) S 4200 4242 4200 0 -1", 0, 0, 0, false},
		{"no comm", "garbage", 0, 0, 0, false},
		{"ppid not a number", "1 (x) S zero 1 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 5", 0, 0, 0, false},
		{"pgrp not a number", "1 (x) S 0 one 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 5", 0, 0, 0, false},
		{"rss not a number", "1 (x) S 0 1 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 many", 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ppid, pgid, got, ok := parseStatRSS([]byte(tt.stat))
			if ppid != tt.wantPPID || pgid != tt.wantPGID || got != tt.want || ok != tt.wantOK {
				t.Errorf("parseStatRSS = %d, %d, %d, %v; want %d, %d, %d, %v", ppid, pgid, got, ok, tt.wantPPID, tt.wantPGID, tt.want, tt.wantOK)
			}
		})
	}
}

// TestWorkerRSSFake: a fake worker (this test binary) has a few MB resident
// while it runs, also when it started after the cached scan, and 0 once it
// is gone, also while that scan is still fresh.
func TestWorkerRSSFake(t *testing.T) {
	w1 := startFake(t, fakeWorkerConfig(t))
	if got := w1.RSS(); got < 1<<20 {
		t.Errorf("RSS of a running worker = %d, want at least 1 MB", got)
	}
	w2 := startFake(t, fakeWorkerConfig(t))
	if got := w2.RSS(); got < 1<<20 {
		t.Errorf("RSS of a worker started after the last scan = %d, want at least 1 MB", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, w := range []*Worker{w1, w2} {
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if got := w.RSS(); got != 0 {
			t.Errorf("RSS after Close = %d, want 0", got)
		}
	}
}

// TestPidsRSSAfterScan: a process started after the cached scan (as a
// renderer is when a page navigates) is found once its finder expires the
// scan, while a process that is gone reads as 0 from the cached scan,
// without scanning again.
func TestPidsRSSAfterScan(t *testing.T) {
	rssCache.mu.Lock()
	rescan()
	at := rssCache.at
	rssCache.mu.Unlock()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if got, n := pidsRSS([]int{gone.Process.Pid}); n != 0 || got != 0 {
		t.Errorf("pidsRSS of an exited process = %d bytes, %d found; want 0, 0", got, n)
	}
	rssCache.mu.Lock()
	// A scan due anyway (the first one over a second old) does not count.
	rescanned := !rssCache.at.Equal(at) && rssCache.at.Sub(at) < rssCacheTTL
	rssCache.mu.Unlock()
	if rescanned {
		t.Error("pidsRSS of an exited process scanned /proc again")
	}

	cmd := exec.CommandContext(t.Context(), "sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	expireScan()
	if got, n := pidsRSS([]int{cmd.Process.Pid}); n != 1 || got <= 0 {
		t.Errorf("pidsRSS of a process started after the scan = %d bytes, %d found; want >0, 1", got, n)
	}
}
