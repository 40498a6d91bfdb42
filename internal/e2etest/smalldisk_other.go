//go:build !linux

package e2etest

import "testing"

// SmallDisk needs Linux's tmpfs; elsewhere the test is skipped.
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	t.Skip("a small filesystem (tmpfs) is needed: Linux only")
	return ""
}

// FillDisk is SmallDisk's companion; see smalldisk_linux.go.
func FillDisk(t testing.TB, dir string) string {
	t.Helper()
	t.Skip("a small filesystem (tmpfs) is needed: Linux only")
	return ""
}
