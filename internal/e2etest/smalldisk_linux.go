package e2etest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size (as mount's size= option: "3m") on a new
// directory and returns it; it is unmounted when the test ends, on every
// path. The test is skipped, saying why, only where mounting is not
// permitted (not root, or no CAP_SYS_ADMIN in a container).
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+size+",mode=0700"); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("a small filesystem is needed and mounting one is not permitted here (mount -t tmpfs: %v); run as root to test a full disk", err)
		}
		t.Fatalf("mount -t tmpfs -o size=%s %s: %v", size, dir, err)
	}
	// Registered after TempDir's own cleanup, so it runs first: the
	// directory is removed once nothing is mounted on it.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			// Something still holds a file there: detach it now, the
			// kernel frees it once the last holder closes.
			if derr := syscall.Unmount(dir, syscall.MNT_DETACH); derr != nil {
				t.Errorf("unmount %s: %v, then %v", dir, err, derr)
			}
		}
	})
	return dir
}

// FillDisk writes a file in dir until its filesystem has no space left,
// and returns the file's path: removing it gives the space back.
func FillDisk(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for len(chunk) > 0 {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			chunk = chunk[:len(chunk)/2] // the last pages, down to one byte
		}
	}
	return path
}
