package session

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// regWith returns a registry of max slots holding one idle handle per id,
// each last active at base plus the given minutes.
func regWith(max int, base time.Time, minutes map[string]int) *registry {
	r := newRegistry(max)
	for id, min := range minutes {
		r.live[id] = &live{id: id, sem: make(chan struct{}, 1), lastActivity: base.Add(time.Duration(min) * time.Minute)}
	}
	return r
}

func ids(ls []*live) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.id
	}
	return out
}

func TestRegistryReserveTakesAFreeSlotWithoutEvicting(t *testing.T) {
	r := regWith(2, time.Now(), map[string]int{"a": 0})
	err := r.reserve(func(l *live) bool {
		t.Fatalf("evict(%s) called while a slot was free", l.id)
		return false
	})
	if err != nil || r.reserved != 1 {
		t.Fatalf("reserve = %v, reserved %d; want nil, 1", err, r.reserved)
	}
	if err := r.reserve(func(*live) bool { return false }); !isCode(err, proxy.EMAXSESSIONS) {
		t.Fatalf("reserve past the limit with a reservation pending = %v, want MAX_SESSIONS_REACHED", err)
	}
	r.fill(&live{id: "b", sem: make(chan struct{}, 1)})
	if len(r.live) != 2 || r.reserved != 0 {
		t.Fatalf("after fill: %d live, %d reserved; want 2, 0", len(r.live), r.reserved)
	}
}

func TestRegistryEvictsTheLeastRecentlyUsedIdleSession(t *testing.T) {
	r := regWith(3, time.Now(), map[string]int{"new": 30, "old": 10, "busy": 0})
	r.live["busy"].calls = 1 // a call in flight: never offered
	var offered []string
	err := r.reserve(func(l *live) bool {
		offered = append(offered, l.id)
		if l.id != "new" {
			return false // "old" is held by a save and cannot go
		}
		r.remove(l)
		return true
	})
	if err != nil {
		t.Fatalf("reserve = %v", err)
	}
	if diff := cmp.Diff([]string{"old", "new"}, offered); diff != "" {
		t.Errorf("sessions offered for eviction (-want +got):\n%s", diff)
	}
	if r.get("new") != nil || r.get("old") == nil || r.reserved != 1 {
		t.Errorf("after eviction: new=%v old=%v reserved=%d; want new gone, old kept, 1 reserved", r.get("new"), r.get("old"), r.reserved)
	}
}

func TestRegistryAllBusyIsMaxSessions(t *testing.T) {
	r := regWith(1, time.Now(), map[string]int{"a": 0})
	r.live["a"].calls = 1
	err := r.reserve(func(l *live) bool {
		t.Fatalf("evict(%s) offered a busy session", l.id)
		return false
	})
	var e *proxy.Error
	if !errors.As(err, &e) || e.Code != proxy.EMAXSESSIONS || e.Details["max_sessions"] != 1 {
		t.Fatalf("reserve = %#v, want MAX_SESSIONS_REACHED naming max_sessions 1", err)
	}
	if r.reserved != 0 {
		t.Errorf("a refused reserve left %d reserved", r.reserved)
	}
}

func TestRegistryReserveGivesUpAfterBoundedPasses(t *testing.T) {
	// Each eviction succeeds but a concurrent create takes the freed slot
	// at once: the reserve must not chase slots forever.
	r := regWith(1, time.Now(), map[string]int{"a": 0})
	evictions := 0
	err := r.reserve(func(l *live) bool {
		evictions++
		return true // "evicted", yet the slot is taken again
	})
	if !isCode(err, proxy.EMAXSESSIONS) || evictions != 3 {
		t.Fatalf("reserve = %v after %d evictions, want MAX_SESSIONS_REACHED after 3", err, evictions)
	}
}

func TestRegistryIdleSince(t *testing.T) {
	base := time.Now()
	r := regWith(5, base, map[string]int{"fresh": 20, "stale": 5, "staler": 1, "busy": 0})
	r.live["busy"].calls = 1
	got := ids(r.idleSince(base.Add(10 * time.Minute)))
	if diff := cmp.Diff([]string{"staler", "stale"}, got); diff != "" {
		t.Errorf("idleSince (-want +got):\n%s", diff)
	}
}

func TestRegistryRemoveKeepsANewerHandle(t *testing.T) {
	r := regWith(2, time.Now(), map[string]int{"a": 0})
	old := r.get("a")
	r.live["a"] = &live{id: "a", sem: make(chan struct{}, 1)} // revived meanwhile
	r.remove(old)
	if r.get("a") == nil || r.get("a") == old {
		t.Fatalf("remove of a stale handle took the new one out")
	}
	r.remove(r.get("a"))
	if r.get("a") != nil || len(r.all()) != 0 {
		t.Fatalf("remove left %v", ids(r.all()))
	}
}

func TestRegistryTransitionSerialisesOneID(t *testing.T) {
	r := newRegistry(1)
	unlock := r.transition("a")
	other := r.transition("b") // another id does not wait
	other()

	entered := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		u := r.transition("a")
		close(entered)
		u()
	}()
	select {
	case <-entered:
		t.Fatal("a second transition of the same id did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	wg.Wait()
	if n := len(r.transitions); n != 0 {
		t.Errorf("%d transition locks left after every unlock", n)
	}
}

func isCode(err error, code string) bool {
	var e *proxy.Error
	return errors.As(err, &e) && e.Code == code
}
