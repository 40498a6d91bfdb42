package bench

import (
	"math"
	"slices"
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
