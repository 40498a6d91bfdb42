//go:build linux

package bridge

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// blockingPipe is a pipe as a parent process hands it to its child: both
// ends blocking (os.Pipe's are not).
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "stdin"), os.NewFile(uintptr(p[1]), "stdin-writer")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func TestPollableInputPipe(t *testing.T) {
	in, w := blockingPipe(t)
	if err := in.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("a blocking pipe took a deadline (%v): the test needs one the poller does not see", err)
	}
	_, out := blockingPipe(t) // another pipe, as stdout is
	r, restore := PollableInput(in, out)
	if r == in {
		t.Fatal("a blocking pipe came back unchanged")
	}
	defer r.Close()
	// Only a file read through the poller takes deadlines.
	if err := r.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("SetReadDeadline: %v; want the input read through the poller", err)
	}
	buf := make([]byte, 64)
	if _, err := r.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read with nothing written = %v, want a deadline error", err)
	}
	if err := r.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	msg := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	go func() { _, _ = io.WriteString(w, msg) }()
	n, err := io.ReadAtLeast(r, buf, len(msg))
	if err != nil || string(buf[:n]) != msg {
		t.Fatalf("read %q, %v; want %q", buf[:n], err, msg)
	}
	if !nonblockingFile(t, in) {
		t.Error("the shared description is still blocking while in use")
	}
	restore()
	if nonblockingFile(t, in) {
		t.Error("restore left the caller's descriptor non-blocking")
	}
}

func TestPollableInputUnchanged(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pr, pw, err := os.Pipe() // already non-blocking, already polled
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	sp, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock := os.NewFile(uintptr(sp[0]), "socket")
	defer sock.Close()
	defer syscall.Close(sp[1])
	tests := []struct {
		name    string
		f       *os.File
		writers []*os.File
	}{
		{"regular file", file, nil},
		{"os.Pipe", pr, nil},
		// One socket for both directions: stdout writes it without the
		// poller, so it must stay blocking.
		{"socket that is also the output", sock, []*os.File{os.Stderr, sock}},
	}
	for _, tt := range tests {
		f, name := tt.f, tt.name
		t.Run(name, func(t *testing.T) {
			before := nonblockingFile(t, f)
			r, restore := PollableInput(f, tt.writers...)
			restore()
			if r != f {
				t.Errorf("got another file; want %s unchanged", name)
			}
			if nonblockingFile(t, f) != before {
				t.Errorf("the descriptor's blocking mode changed")
			}
		})
	}
}

func nonblockingFile(t *testing.T, f *os.File) bool {
	t.Helper()
	fd, ok := rawFD(f)
	if !ok {
		t.Fatalf("no descriptor for %s", f.Name())
	}
	return nonblocking(fd)
}
