//go:build unix

package upstream

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChromiumShMergesDisabledFeatures runs the browser server's Chromium
// launcher with a stand-in browser that prints its arguments: Chromium
// keeps only the last --disable-features, so the launcher must hand it one
// holding every list, and everything else unchanged.
func TestChromiumShMergesDisabledFeatures(t *testing.T) {
	dir := t.TempDir()
	launcher, err := chromiumLauncher(dir)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "browser")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nfor a do printf '%s\\n' \"$a\"; done\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"none", []string{"--headless", "--no-sandbox"}, []string{"--headless", "--no-sandbox"}},
		{"one list", []string{"--disable-features=A,B", "--mute-audio"}, []string{"--mute-audio", "--disable-features=A,B"}},
		{
			"Playwright's list then the proxy's",
			[]string{"--disable-extensions", "--disable-features=Translate,PaintHolding", "--remote-debugging-pipe", "--disable-features=WebUIOmniboxPopup", "about:blank"},
			[]string{"--disable-extensions", "--remote-debugging-pipe", "about:blank", "--disable-features=Translate,PaintHolding,WebUIOmniboxPopup"},
		},
		{"arguments with spaces and globs stay whole", []string{"--user-agent=a b  c", "*", "--disable-features=X"}, []string{"--user-agent=a b  c", "*", "--disable-features=X"}},
		{"enable-features untouched", []string{"--enable-features=A", "--disable-features=B", "--enable-features=C"}, []string{"--enable-features=A", "--enable-features=C", "--disable-features=B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(launcher, tc.args...)
			cmd.Env = append(os.Environ(), chromiumEnv+"="+fake)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("launcher: %v", err)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("arguments the browser got (-want +got):\n%s", diff)
			}
		})
	}
}
