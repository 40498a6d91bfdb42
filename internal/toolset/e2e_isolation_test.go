package toolset_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// Seed 001's property 12, against real Chromium: for any cookie and
// localStorage entry set in one session, the other session never sees it,
// and the session that set it does. 100 runs; upstream's settle wait after
// each action is switched off (--timeout-settle=0) to keep them quick.
func TestPropertySessionIsolation(tt *testing.T) {
	pages := site(tt)
	s := startServer(tt, quick)
	a, b := s.createSession(tt), s.createSession(tt)
	for _, id := range []string{a, b} {
		s.ok(tt, id, "navigate", map[string]any{"url": pages + "/second.html"}, nil)
	}
	type state struct {
		Cookies []struct{ Name, Value string }
		Origins []struct {
			Origin       string
			LocalStorage []struct{ Name, Value string } `json:"localStorage"`
		}
	}
	read := func(t *rapid.T, id string) state {
		var out struct{ State state }
		s.ok(tt, id, "save_state", map[string]any{}, &out)
		return out.State
	}
	holds := func(st state, name, value string) (cookie, storage bool) {
		for _, c := range st.Cookies {
			cookie = cookie || (c.Name == name && c.Value == value)
		}
		for _, o := range st.Origins {
			for _, e := range o.LocalStorage {
				storage = storage || (e.Name == name && e.Value == value)
			}
		}
		return
	}
	rapid.Check(tt, func(t *rapid.T) {
		from, to := a, b
		if rapid.Bool().Draw(t, "b_writes") {
			from, to = b, a
		}
		name := rapid.StringMatching(`[A-Za-z][A-Za-z0-9_]{0,15}`).Draw(t, "name")
		value := rapid.StringMatching(`[A-Za-z0-9._~-]{1,30}`).Draw(t, "value")
		// Replace the writer's whole state with just this entry.
		st, _ := json.Marshal(map[string]any{
			"cookies": []map[string]any{{"name": name, "value": value, "domain": "127.0.0.1", "path": "/", "expires": -1, "httpOnly": false, "secure": false, "sameSite": "Lax"}},
			"origins": []map[string]any{{"origin": strings.TrimSuffix(pages, "/"), "localStorage": []map[string]string{{"name": name, "value": value}}}},
		})
		s.ok(tt, from, "restore_state", map[string]any{"state": json.RawMessage(st), "reload": false}, nil)
		// Both sessions are read at once: they have their own workers.
		var mine, theirs state
		var wg sync.WaitGroup
		wg.Go(func() { mine = read(t, from) })
		wg.Go(func() { theirs = read(t, to) })
		wg.Wait()
		if c, l := holds(mine, name, value); !c || !l {
			t.Fatalf("the writing session lost its own cookie (%v) or localStorage (%v)", c, l)
		}
		if c, l := holds(theirs, name, value); c || l {
			t.Fatalf("the other session sees the cookie (%v) or localStorage (%v) %s=%s", c, l, name, value)
		}
	})
}
