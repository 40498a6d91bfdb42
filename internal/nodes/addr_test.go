package nodes

import "testing"

func TestAddr(t *testing.T) {
	for in, want := range map[string]string{
		"ws://10.0.0.5:3000/pw?token=x#max=2": "10.0.0.5:3000",
		"wss://browsers.example.com/pw":       "browsers.example.com:443",
		"http://127.0.0.1:9222":               "127.0.0.1:9222",
		"":                                    "",
		"not a url":                           "",
	} {
		if got := Addr(in); got != want {
			t.Errorf("Addr(%q) = %q, want %q", in, got, want)
		}
	}
}
