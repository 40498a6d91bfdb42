package bench

import (
	"math"
	"sort"
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
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []float64, p float64) float64 {
	switch {
	case p <= 0:
		return s[0]
	case p >= 100:
		return s[len(s)-1]
	}
	h := p / 100 * float64(len(s)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[i]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
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
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Summary{
		N: len(s), Min: s[0], Max: s[len(s)-1], Mean: sum / float64(len(s)),
		Median: percentileSorted(s, 50), P95: percentileSorted(s, 95),
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
