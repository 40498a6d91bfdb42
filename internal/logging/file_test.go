package logging

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFileReopen: lines logged by several goroutines while the file is
// renamed and reopened each land whole in exactly one of the two files,
// the renamed file keeps what was written before, and both are owner-only.
func TestFileReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proxy.log")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log := New(f, "info", "text")
	log.Info("before")

	const writers, each = 4, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				log.Info("line", "id", fmt.Sprintf("%d-%d", w, i), "pad", strings.Repeat("x", 200))
			}
		}()
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := f.Reopen(); err != nil {
		t.Fatal(err)
	}
	log.Info("after")
	wg.Wait()

	old, cur := lines(t, path+".1"), lines(t, path)
	if len(old) == 0 || !strings.Contains(old[0], "msg=before") {
		t.Errorf("the renamed file does not start with the first line: %q", old)
	}
	if strings.Contains(strings.Join(old, "\n"), "msg=after") || !strings.Contains(strings.Join(cur, "\n"), "msg=after") {
		t.Errorf("the line logged after the reopen is not in the new file only")
	}
	seen := map[string]int{}
	for _, l := range append(old, cur...) {
		whole := strings.HasPrefix(l, "time=") && (!strings.Contains(l, "msg=line") || strings.HasSuffix(l, strings.Repeat("x", 200)))
		if !whole {
			t.Errorf("split line %q", l)
		}
		if _, id, ok := strings.Cut(l, "id="); ok {
			id, _, _ = strings.Cut(id, " ")
			seen[id]++
		}
	}
	want := map[string]int{}
	for w := range writers {
		for i := range each {
			want[fmt.Sprintf("%d-%d", w, i)] = 1
		}
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("lines logged (-want +got):\n%s", diff)
	}
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != FileMode {
			t.Errorf("%s: mode %v, want %v", p, got, os.FileMode(FileMode))
		}
	}
}

// TestFileReopenFails: when the path cannot be opened again, Reopen says
// so and the lines keep going to the file open so far.
func TestFileReopenFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "proxy.log")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	moved := dir + ".old"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := f.Reopen(); err == nil {
		t.Fatal("Reopen in a directory that is gone succeeded")
	}
	if _, err := f.Write([]byte("still here\n")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"still here"}, lines(t, filepath.Join(moved, "proxy.log"))); diff != "" {
		t.Errorf("the file open so far (-want +got):\n%s", diff)
	}
}

func TestOpenFileMissingDirectory(t *testing.T) {
	_, err := OpenFile(filepath.Join(t.TempDir(), "missing", "proxy.log"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile in a missing directory: %v, want a not-exist error", err)
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var out []string
	sc := bufio.NewScanner(b)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
