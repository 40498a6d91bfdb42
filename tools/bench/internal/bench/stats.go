package bench

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Percentile returns the p-th percentile (0–100) of xs by linear
// interpolation between the closest ranks (Hyndman & Fan type 7, as numpy and
// R default to): the median of an even count is the mean of the two middle
// values. It returns NaN for an empty slice and does not modify xs.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return percentileSorted(slices.Sorted(slices.Values(xs)), p)
}

func percentileSorted(s []float64, p float64) float64 {
	h := min(max(p/100, 0), 1) * float64(len(s)-1)
	i := int(h)
	if i+1 >= len(s) {
		return s[i]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}

// Summary describes a sample of latencies in milliseconds.
type Summary struct {
	N      int     `json:"n"`
	Min    float64 `json:"min_ms"`
	Median float64 `json:"median_ms"`
	P95    float64 `json:"p95_ms"`
	Max    float64 `json:"max_ms"`
	Mean   float64 `json:"mean_ms"`
}

// Summarize computes the summary of xs (milliseconds); the zero Summary for
// an empty sample.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Sorted(slices.Values(xs))
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Summary{N: len(s), Min: s[0], Max: s[len(s)-1], Mean: sum / float64(len(s)), Median: percentileSorted(s, 50), P95: percentileSorted(s, 95)}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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

// IntList is a flag.Value for a comma-separated list of non-negative
// integers: -levels 1,10,25.
type IntList []int

func (l *IntList) String() string {
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(*l)), ","), "[]")
}

func (l *IntList) Set(s string) error {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a list of non-negative integers", s)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// PageList is a flag.Value for a comma-separated list of page names (see
// Pages), spaces allowed.
type PageList []string

func (l *PageList) String() string { return strings.Join(*l, ",") }

func (l *PageList) Set(s string) error {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		p := strings.TrimSpace(part)
		if _, ok := Pages[p]; !ok {
			return fmt.Errorf("%q: want form, table or catalogue", p)
		}
		out = append(out, p)
	}
	*l = out
	return nil
}

// buttonLineRE matches an aria-snapshot line of a button, with its optional
// accessible name and its element ref:
//
//   - button "Add 17" [ref=e57]
//   - button "Save draft" [active] [ref=f1e12]
var buttonLineRE = regexp.MustCompile(`^\s*- button(?: ("(?:[^"\\]|\\.)*"))?(?:\s|:|$).*?\[ref=([A-Za-z0-9_-]+)\]`)

// ButtonRef returns the element ref ("e57") of the first button in an
// @playwright/mcp snapshot (yaml text) whose accessible name is label, or of
// the first button at all when label is empty.
func ButtonRef(snapshot, label string) (string, bool) {
	for line := range strings.Lines(snapshot) {
		if m := buttonLineRE.FindStringSubmatch(line); m != nil {
			if name, err := strconv.Unquote(m[1]); label == "" || err == nil && name == label {
				return m[2], true
			}
		}
	}
	return "", false
}
