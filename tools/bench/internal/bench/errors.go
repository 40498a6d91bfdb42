package bench

import (
	"sort"
	"sync"
)

// ErrorCount is one distinct error message and how often it occurred.
type ErrorCount struct {
	Where   string `json:"where"`
	Message string `json:"message"`
	Count   int    `json:"count"`
	// Order is the rank of its first occurrence.
	Order int `json:"-"`
}

// errorLog collects errors by (where, message), keeping the first ones.
type errorLog struct {
	mu    sync.Mutex
	m     map[[2]string]*ErrorCount
	count int
}

func newErrorLog() *errorLog { return &errorLog{m: map[[2]string]*ErrorCount{}} }

const maxDistinctErrors = 50

func (l *errorLog) add(where string, err error) {
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count++
	k := [2]string{where, msg}
	if e, ok := l.m[k]; ok {
		e.Count++
		return
	}
	if len(l.m) < maxDistinctErrors {
		l.m[k] = &ErrorCount{Where: where, Message: msg, Count: 1, Order: len(l.m)}
	}
}

func (l *errorLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// list returns the distinct errors in the order they first occurred.
func (l *errorLog) list() []ErrorCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ErrorCount, 0, len(l.m))
	for _, e := range l.m {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Order < out[j].Order })
	return out
}
