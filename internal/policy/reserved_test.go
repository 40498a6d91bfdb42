package policy

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func TestReservedAddresses(t *testing.T) {
	loopback := mustNew(t, Config{Reserved: []string{"127.0.0.1:34501", "node.internal:3000"}})
	// An allow-list that lets loopback in does not let the proxy in.
	allowed := mustNew(t, Config{AllowedDomains: []string{"127.0.0.0/8", "localhost"}, Reserved: []string{"127.0.0.1:34501"}})
	v6 := mustNew(t, Config{Reserved: []string{"[::1]:34501"}})
	remote := mustNew(t, Config{Reserved: []string{"10.1.2.3:9222"}})

	tests := []struct {
		name     string
		p        *Policy
		url      string
		reserved bool
	}{
		{"the address itself", loopback, "http://127.0.0.1:34501/sessions", true},
		{"https on the same port", loopback, "https://127.0.0.1:34501/", true},
		{"localhost", loopback, "http://localhost:34501/content/x", true},
		{"localhost subdomain", loopback, "http://a.localhost:34501/", true},
		{"localhost trailing dot", loopback, "http://localhost.:34501/", true},
		{"another loopback address", loopback, "http://127.0.0.2:34501/", true},
		{"ipv6 loopback", loopback, "http://[::1]:34501/", true},
		{"ipv4-mapped ipv6", loopback, "http://[::ffff:127.0.0.1]:34501/", true},
		{"unspecified address", loopback, "http://0.0.0.0:34501/", true},
		{"decimal form", loopback, "http://2130706433:34501/", true},
		{"short form", loopback, "http://127.1:34501/", true},
		{"hex form", loopback, "http://0x7f.0.0.1:34501/", true},
		{"no scheme", loopback, "localhost:34501/sessions", true},
		{"backslashes", loopback, `http:\\127.0.0.1:34501\sessions`, true},
		{"userinfo", loopback, "http://good.com@127.0.0.1:34501/", true},
		{"another port", loopback, "http://127.0.0.1:8080/", false},
		{"default port", loopback, "http://127.0.0.1/", false},
		{"another host on the port", loopback, "http://example.com:34501/", false},
		{"named host", loopback, "http://node.internal:3000/json/list", true},
		{"named host another port", loopback, "http://node.internal:3001/", false},
		{"allow-list does not open it", allowed, "http://localhost:34501/sessions", true},
		{"allow-list still opens other ports", allowed, "http://localhost:8000/", false},
		{"bound to ipv6 loopback", v6, "http://127.0.0.1:34501/", true},
		{"remote browser", remote, "http://10.1.2.3:9222/json/list", true},
		{"remote browser not loopback", remote, "http://127.0.0.1:9222/", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.CheckURL(tc.url)
			if got := err != nil; got != tc.reserved {
				t.Fatalf("CheckURL(%q) = %v, want refused=%v", tc.url, err, tc.reserved)
			}
			if err != nil && proxy.ErrorCode(err) != proxy.EDOMAINBLOCKED {
				t.Fatalf("CheckURL(%q) code = %s, want %s", tc.url, proxy.ErrorCode(err), proxy.EDOMAINBLOCKED)
			}
			if got := tc.p.IsReserved(tc.url); got != tc.reserved && tc.name != "no scheme" {
				// IsReserved reads the URL a page is at: always absolute.
				t.Fatalf("IsReserved(%q) = %v, want %v", tc.url, got, tc.reserved)
			}
		})
	}
}

func TestReservedEntries(t *testing.T) {
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:0", "http://127.0.0.1:1/", ":34501x"} {
		if _, err := New(Config{Reserved: []string{bad}}); err == nil {
			t.Errorf("New(Reserved: %q) accepted it", bad)
		}
	}
	if got := ReservedAddrs("127.0.0.1:34501"); !slices.Equal(got, []string{"127.0.0.1:34501"}) {
		t.Errorf("ReservedAddrs(loopback) = %v", got)
	}
	if got := ReservedAddrs("0.0.0.0:34501"); len(got) < 2 || !slices.Contains(got, "127.0.0.1:34501") {
		t.Errorf("ReservedAddrs(0.0.0.0) = %v, want the address and the interfaces' (loopback included)", got)
	}
}

func TestReserveWhileRunning(t *testing.T) {
	p := mustNew(t, Config{Reserved: []string{"127.0.0.1:34501"}})
	first := p.Reserve("127.0.0.1:40001")
	second := p.Reserve("127.0.0.1:40001") // a second browser on the same port after a relaunch
	other := p.Reserve("127.0.0.1:40002")
	bad := p.Reserve("not an address")

	type state map[string]bool
	check := func(t *testing.T, want state) {
		t.Helper()
		got := state{}
		for u := range want {
			got[u] = p.IsReserved(u)
			err := p.CheckCall("browser_navigate", nil, map[string]any{"url": u})
			if refused := err != nil && proxy.ErrorCode(err) == proxy.EDOMAINBLOCKED; refused != got[u] {
				t.Errorf("CheckCall(%q) = %v but IsReserved = %v", u, err, got[u])
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("reserved (-want +got):\n%s", diff)
		}
	}
	steps := []struct {
		name    string
		release func()
		want    state
	}{
		{"all held", func() {}, state{
			"http://127.0.0.1:40001/json/version": true, "http://localhost:40001/json/list": true,
			"http://127.0.0.1:40002/json": true, "http://127.0.0.1:34501/": true, "http://127.0.0.1:40003/": false,
		}},
		{"one of two holders of a port released", first, state{"http://127.0.0.1:40001/json": true, "http://127.0.0.1:40002/json": true}},
		{"released twice changes nothing", first, state{"http://127.0.0.1:40001/json": true}},
		{"last holder released", second, state{"http://127.0.0.1:40001/json": false, "http://127.0.0.1:40002/json": true, "http://127.0.0.1:34501/": true}},
		{"all released", func() { other(); bad() }, state{"http://127.0.0.1:40002/json": false, "http://127.0.0.1:34501/": true}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.release()
			check(t, st.want)
		})
	}
}

func TestReserveConcurrently(t *testing.T) {
	p := mustNew(t, Config{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addr := fmt.Sprintf("127.0.0.1:%d", 41000+i)
			release := p.Reserve(addr)
			if !p.IsReserved("http://" + addr + "/") {
				t.Errorf("%s not reserved", addr)
			}
			release()
		}()
	}
	wg.Wait()
	for i := range 8 {
		if u := fmt.Sprintf("http://127.0.0.1:%d/", 41000+i); p.IsReserved(u) {
			t.Errorf("%s still reserved after release", u)
		}
	}
}
