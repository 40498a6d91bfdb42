package bench

import (
	"slices"
	"sync"
)

// ErrorCount is one distinct error message and how often it occurred.
type ErrorCount struct {
	Where   string `json:"where"`
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// errorLog collects errors by (where, message), keeping the first 50 in
// the order they first occurred: a failing run repeats itself.
type errorLog struct {
	mu    sync.Mutex
	errs  []ErrorCount
	count int
}

func newErrorLog() *errorLog { return &errorLog{} }

func (l *errorLog) add(where string, err error) {
	msg := truncate(err.Error(), 300)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count++
	if i := slices.IndexFunc(l.errs, func(e ErrorCount) bool { return e.Where == where && e.Message == msg }); i >= 0 {
		l.errs[i].Count++
	} else if len(l.errs) < 50 {
		l.errs = append(l.errs, ErrorCount{Where: where, Message: msg, Count: 1})
	}
}

func (l *errorLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

func (l *errorLog) list() []ErrorCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}
