package bridge

import "testing"

func TestProcs(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int
	}{
		{"", 1},
		{"4", 0},
		{"1", 0},
	} {
		got := Procs(func(k string) string {
			if k == "GOMAXPROCS" {
				return tc.env
			}
			return ""
		})
		if got != tc.want {
			t.Errorf("Procs(GOMAXPROCS=%q) = %d, want %d", tc.env, got, tc.want)
		}
	}
}
