package proctest

import (
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	// comm with spaces and a parenthesis, as Chromium threads have.
	stat := "4242 (Chrome_ChildIO) x) S 4200 4200 4200 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 8 0 987654 100000 200 18446744073709551615 1 1 0 0 0 0 0 0 0"
	p, ok := ParseStat(4242, []byte(stat))
	if !ok || p.PPID != 4200 || p.Start != 987654 || p.Comm != "Chrome_ChildIO) x" || p.State != 'S' {
		t.Errorf("ParseStat = %+v, %v", p, ok)
	}
	if _, ok := ParseStat(1, []byte("1 (zombie) Z 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0 0")); ok {
		t.Error("a zombie parsed as live")
	}
}

func TestListenAddr(t *testing.T) {
	tests := []struct {
		log, want string
		ok        bool
	}{
		{`time=2026-11-26T10:00:00Z level=INFO msg="proxy-server listening" addr=127.0.0.1:41235 database=/tmp/p.db` + "\n", "127.0.0.1:41235", true},
		{`level=INFO msg="proxy-server starting"` + "\n", "", false},
	}
	for _, tt := range tests {
		got, ok := ListenAddr([]byte(tt.log))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q, %v", tt.log, got, ok, tt.want, tt.ok)
		}
	}
}

// TestListenLineInPieces: the listen line is found however the output is
// cut into writes, and everything is passed on.
func TestListenLineInPieces(t *testing.T) {
	out := "level=INFO msg=\"starting\"\nlevel=INFO msg=\"proxy-server listening\" addr=127.0.0.1:9 x=1\nlevel=INFO msg=after\n"
	for size := 1; size <= len(out); size += 7 {
		var got strings.Builder
		l := &listenLine{w: &got, found: make(chan struct{})}
		for i := 0; i < len(out); i += size {
			if _, err := l.Write([]byte(out[i:min(i+size, len(out))])); err != nil {
				t.Fatal(err)
			}
		}
		if addr, ok := l.addr(); !ok || addr != "127.0.0.1:9" {
			t.Errorf("writes of %d bytes: addr %q, %v", size, addr, ok)
		}
		select {
		case <-l.found:
		default:
			t.Errorf("writes of %d bytes: found not closed", size)
		}
		if got.String() != out {
			t.Errorf("writes of %d bytes: passed on %q", size, got.String())
		}
	}
}
