package session

import (
	"fmt"
	"sort"
	"sync"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// registry is the sessions live in this process: their handles, the slots
// promised to creates and resumes still starting, and the locks that keep
// two lifecycle changes of one session from interleaving. It decides which
// sessions an eviction may take and which have gone idle; it never touches
// a worker or the store, so suspending them is its caller's job.
type registry struct {
	max int // live slots, Options.MaxSessions

	mu          sync.Mutex
	live        map[string]*live
	reserved    int // slots promised to creates and resumes in progress
	transitions map[string]*transitionLock
}

func newRegistry(max int) *registry {
	return &registry{max: max, live: make(map[string]*live), transitions: make(map[string]*transitionLock)}
}

// get returns the live handle of id, or nil.
func (r *registry) get(id string) *live {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[id]
}

// all returns every live handle, in no particular order.
func (r *registry) all() []*live {
	r.mu.Lock()
	defer r.mu.Unlock()
	lives := make([]*live, 0, len(r.live))
	for _, l := range r.live {
		lives = append(lives, l)
	}
	return lives
}

// reserve takes one of the max live slots. When they are all taken it
// offers evict the idle sessions, least recently used first, until one is
// suspended to make room. A session with a call in flight is never offered:
// when every session is busy the answer is MAX_SESSIONS_REACHED.
func (r *registry) reserve(evict func(*live) bool) error {
	// Each pass either takes a free slot or evicts one session; a bounded
	// number of passes stops a create from chasing slots that concurrent
	// creates keep taking.
	const passes = 3
	for pass := 0; ; pass++ {
		r.mu.Lock()
		if len(r.live)+r.reserved < r.max {
			r.reserved++
			r.mu.Unlock()
			return nil
		}
		if pass == passes {
			r.mu.Unlock()
			break
		}
		victims := r.idleByAge()
		r.mu.Unlock()
		evicted := false
		for _, v := range victims {
			if evict(v) {
				evicted = true
				break
			}
		}
		if !evicted {
			break
		}
	}
	return &proxy.Error{Code: proxy.EMAXSESSIONS,
		Message:    fmt.Sprintf("all %d live sessions are busy; none can be suspended to make room", r.max),
		Retryable:  true,
		Suggestion: "Retry when a call finishes, or close a session you no longer need (close_session).",
		Details:    map[string]any{"max_sessions": r.max}}
}

// unreserve gives back a slot whose create or resume failed.
func (r *registry) unreserve() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reserved--
}

// fill puts l in the slot reserved for it.
func (r *registry) fill(l *live) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[l.id] = l
	r.reserved--
}

// remove takes l out, unless its id already has another handle: a session
// closed and revived meanwhile keeps its new one.
func (r *registry) remove(l *live) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[l.id] == l {
		delete(r.live, l.id)
	}
}

// idleByAge lists live sessions without a call in flight, least recently
// used first. The caller holds r.mu.
func (r *registry) idleByAge() []*live {
	type aged struct {
		l  *live
		at time.Time
	}
	var idle []aged
	for _, l := range r.live {
		l.mu.Lock()
		if l.calls == 0 {
			idle = append(idle, aged{l, l.lastActivity})
		}
		l.mu.Unlock()
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].at.Before(idle[j].at) })
	out := make([]*live, len(idle))
	for i, a := range idle {
		out[i] = a.l
	}
	return out
}

// idleSince lists the sessions without a call in flight whose last
// activity is before cutoff, least recently used first.
func (r *registry) idleSince(cutoff time.Time) []*live {
	r.mu.Lock()
	defer r.mu.Unlock()
	var stale []*live
	for _, l := range r.idleByAge() {
		l.mu.Lock()
		old := l.lastActivity.Before(cutoff)
		l.mu.Unlock()
		if old {
			stale = append(stale, l)
		}
	}
	return stale
}

// transition serialises the lifecycle changes of one session id that do not
// go through its live handle (a close or a resume of a session without a
// worker). It returns the unlock function.
func (r *registry) transition(id string) func() {
	r.mu.Lock()
	t := r.transitions[id]
	if t == nil {
		t = &transitionLock{}
		r.transitions[id] = t
	}
	t.refs++
	r.mu.Unlock()
	t.mu.Lock()
	return func() {
		t.mu.Unlock()
		r.mu.Lock()
		if t.refs--; t.refs == 0 {
			delete(r.transitions, id)
		}
		r.mu.Unlock()
	}
}

type transitionLock struct {
	mu   sync.Mutex
	refs int // guarded by registry.mu
}
