package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFitTrend(t *testing.T) {
	ts := []float64{0, 1, 2, 3, 4, 5}
	tests := []struct {
		name         string
		x, y         []float64
		wantB, wantC float64
		wantAdjusted bool
	}{
		{"plain line", nil, []float64{10, 12, 14, 16, 18, 20}, 2, 0, false},
		{"flat", nil, []float64{5, 5, 5, 5, 5, 5}, 0, 0, false},
		// y follows the active count only: the raw slope is not 0, the
		// adjusted one is.
		{"active sessions explain it", []float64{9, 7, 9, 8, 10, 10}, []float64{900, 700, 900, 800, 1000, 1000}, 0, 100, true},
		{"growth plus active sessions", []float64{9, 7, 9, 8, 10, 10}, []float64{900, 703, 906, 809, 1012, 1015}, 3, 100, true},
		{"constant active count is dropped", []float64{8, 8, 8, 8, 8, 8}, []float64{1, 2, 3, 4, 5, 6}, 1, 0, false},
		{"active count collinear with time is dropped", []float64{1, 2, 3, 4, 5, 6}, []float64{1, 2, 3, 4, 5, 6}, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, c, adj := fitTrend(ts, tt.x, tt.y)
			if math.Abs(b-tt.wantB) > 1e-6 || math.Abs(c-tt.wantC) > 1e-6 || adj != tt.wantAdjusted {
				t.Errorf("fitTrend = %v, %v, %v; want %v, %v, %v", b, c, adj, tt.wantB, tt.wantC, tt.wantAdjusted)
			}
		})
	}
	if _, _, adj := fitTrend(ts[:4], []float64{1, 2, 1, 2}, []float64{1, 2, 3, 4}); adj {
		t.Error("4 points: the active count must be dropped (too few degrees of freedom)")
	}
}

func soakSamples(rss func(i int) int64, fds func(i int) int, active func(i int) int, n int) []SoakSample {
	out := make([]SoakSample, n)
	for i := range out {
		out[i] = SoakSample{ElapsedS: float64(i) * 60, Memory: MemSample{RSSKB: rss(i), PSSKB: rss(i) * 2 / 3, Procs: 40},
			ServerRSSKB: 30 << 10, ServerFDs: fds(i), TreeFDs: 900, Active: active(i), Goroutines: 120, HeapInuseKB: 12 << 10, DBBytes: int64(i) << 20}
	}
	return out
}

func TestSoakTrend(t *testing.T) {
	const gb = 1 << 20 // in kB
	alternating := func(i int) int { return 8 + i%2 }
	tests := []struct {
		name        string
		samples     []SoakSample
		wantVerdict string
	}{
		{"flat", soakSamples(func(int) int64 { return 3 * gb }, func(int) int { return 40 }, alternating, 31), verdictFlat},
		{"warm-up sample left out", soakSamples(func(i int) int64 {
			if i == 0 {
				return gb
			}
			return 3 * gb
		}, func(int) int { return 40 }, alternating, 31), verdictFlat},
		{"memory follows live sessions", soakSamples(func(i int) int64 { return 2*gb + int64(alternating(i))*(200<<10) },
			func(i int) int { return 10 + 3*alternating(i) }, alternating, 31), verdictFlat},
		{"RSS grows 10 %", soakSamples(func(i int) int64 { return 3*gb + int64(i)*(3*gb/300) }, func(int) int { return 40 }, alternating, 31),
			verdictUp + ": process tree RSS, process tree PSS"},
		{"server leaks a descriptor every 5 minutes", soakSamples(func(int) int64 { return 3 * gb }, func(i int) int { return 40 + i/5 }, alternating, 31),
			verdictUp + ": proxy-server fds"},
		{"too few samples", soakSamples(func(int) int64 { return 3 * gb }, func(int) int { return 40 }, alternating, 3), verdictTooFew},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, verdict, rule := soakTrend(tt.samples)
			if !strings.HasPrefix(verdict, tt.wantVerdict) {
				t.Errorf("verdict %q, want %q; trend:\n%+v", verdict, tt.wantVerdict, lines)
			}
			if rule == "" {
				t.Error("no rule explained")
			}
			for _, l := range lines {
				if l.N != len(tt.samples)-1 {
					t.Errorf("%s: fitted %d samples, want all but the first (%d)", l.Metric, l.N, len(tt.samples)-1)
				}
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP go_goroutines Number of goroutines.
# TYPE go_goroutines gauge
go_goroutines 123
go_memstats_heap_inuse_bytes 1.2345e+07
proxy_calls_total{tool="browser_click"} 4
process_open_fds 37
`
	got := parseMetrics(text)
	want := map[string]float64{"go_goroutines": 123, "go_memstats_heap_inuse_bytes": 1.2345e7, "process_open_fds": 37}
	if len(got) != len(want) {
		t.Errorf("parseMetrics = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// A leak keeps its slope from one half of the run to the other; a warm-up
// that levels off does not. The halves are shown beside the verdict.
func TestTrendLineHalves(t *testing.T) {
	ts := make([]float64, 30)
	for i := range ts {
		ts[i] = float64(i+1) / 60 // hours: a sample a minute
	}
	tests := []struct {
		name string
		y    func(h float64) float64
		// want the second half's slope below this fraction of the first's
		// (ratio < 0) or within 1 % of it (ratio == 1)
		ratio float64
	}{
		{"leak: 4 MB/h all along", func(h float64) float64 { return 30 + 4*h }, 1},
		{"warm-up levelling off", func(h float64) float64 { return 30 + 3*(1-math.Exp(-h/0.1)) }, 0.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ys := make([]float64, len(ts))
			for i, h := range ts {
				ys[i] = tt.y(h)
			}
			tl := trendLine("m", "MB", ts, make([]float64, len(ts)), ys)
			if len(tl.HalfSlopesPerHour) != 2 {
				t.Fatalf("half slopes %v, want two", tl.HalfSlopesPerHour)
			}
			first, second := tl.HalfSlopesPerHour[0], tl.HalfSlopesPerHour[1]
			if first <= 0 {
				t.Fatalf("first half's slope %.3f, want > 0", first)
			}
			switch r := second / first; {
			case tt.ratio == 1 && math.Abs(r-1) > 0.01:
				t.Errorf("second/first = %.3f (%.3f → %.3f), want 1", r, first, second)
			case tt.ratio < 1 && r >= tt.ratio:
				t.Errorf("second/first = %.3f (%.3f → %.3f), want < %.2f", r, first, second, tt.ratio)
			}
		})
	}
	short := trendLine("m", "MB", ts[:5], make([]float64, 5), []float64{1, 2, 3, 4, 5})
	if short.HalfSlopesPerHour != nil {
		t.Errorf("5 samples: half slopes %v, want none (3 per half at least)", short.HalfSlopesPerHour)
	}
}

func TestMeanSample(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	reading := func(i int, fds, active int, pss int64, goroutines int) SoakSample {
		return SoakSample{ElapsedS: float64(60 + 10*i), At: at.Add(time.Duration(i) * 10 * time.Second),
			Memory: MemSample{Procs: 30 + i%2, RSSKB: 3000, PSSKB: pss, ByKind: map[string]KindMem{
				"node": {Procs: 10 + i%2, RSSKB: 700, PSSKB: pss / 2}}},
			ServerRSSKB: 33000 + int64(i), ServerFDs: fds, TreeFDs: 1000, Active: active, Suspended: 10 - active,
			Ops: 100 * i, Errors: i, Goroutines: goroutines, HeapInuseKB: 5000, SQLiteMappedKB: -1, DBBytes: int64(i) << 20}
	}
	tests := []struct {
		name     string
		readings []SoakSample
		want     SoakSample
	}{
		{
			name:     "one reading is itself",
			readings: []SoakSample{reading(0, 70, 8, 1600, 75)},
			want:     withMeans(reading(0, 70, 8, 1600, 75), 1, 8),
		},
		{
			// A worker starting holds 4 more descriptors in one reading
			// of six: the sample moves by less than one.
			name: "a transient is diluted, counters are the last reading's",
			readings: []SoakSample{reading(0, 70, 8, 1600, 75), reading(1, 74, 9, 1700, 80), reading(2, 70, 8, 1600, 75),
				reading(3, 70, 8, 1600, 75), reading(4, 70, 8, 1600, 75), reading(5, 70, 8, 1600, 75)},
			want: func() SoakSample {
				s := reading(5, 71, 8, 1617, 76)
				s.ElapsedS = 85
				s.ServerRSSKB = 33003 // mean of 33000..33005, rounded
				s.Suspended = 2
				// 30, 31, 30, 31, 30, 31 processes: 30.5, rounded half up.
				s.Memory.Procs = 31
				return withMeans(s, 6, 8+1.0/6)
			}(),
		},
		{
			name:     "a gauge missing from every reading stays missing",
			readings: []SoakSample{reading(0, 70, 8, 1600, -1), reading(1, 70, 8, 1600, -1)},
			want: func() SoakSample {
				s := reading(1, 70, 8, 1600, -1)
				s.ElapsedS, s.ServerRSSKB = 65, 33001
				s.Memory.Procs = 31
				return withMeans(s, 2, 8)
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := meanSample(tt.readings)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("meanSample (-want +got):\n%s", diff)
			}
		})
	}
}

func withMeans(s SoakSample, readings int, active float64) SoakSample {
	s.Readings, s.ActiveMean, s.Memory.ByKind = readings, active, nil
	return s
}

func TestReadingTimes(t *testing.T) {
	from := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	got := readingTimes(from, time.Minute, 6)
	want := []time.Time{from.Add(10 * time.Second), from.Add(20 * time.Second), from.Add(30 * time.Second),
		from.Add(40 * time.Second), from.Add(50 * time.Second), from.Add(time.Minute)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readingTimes (-want +got):\n%s", diff)
	}
}

// TestSoakTrendUsesMeanActive: a sample averaged over its readings is
// adjusted for the mean active count, not the rounded one.
func TestSoakTrendUsesMeanActive(t *testing.T) {
	const perSession = 40 << 10 // kB
	samples := soakSamples(func(int) int64 { return 0 }, func(int) int { return 40 }, func(int) int { return 0 }, 31)
	for i := range samples {
		mean := 8 + 0.4*float64(i%3) // 8, 8.4, 8.8: rounds to 8, 8, 9
		samples[i].Readings, samples[i].ActiveMean, samples[i].Active = 6, mean, int(math.Round(mean))
		samples[i].Memory.RSSKB = 2<<20 + int64(mean*perSession)
		samples[i].Memory.PSSKB = samples[i].Memory.RSSKB * 2 / 3
	}
	lines, verdict, _ := soakTrend(samples)
	if verdict != verdictFlat {
		t.Errorf("verdict %q, want %q", verdict, verdictFlat)
	}
	for _, l := range lines {
		if l.Metric == "process tree RSS" && (math.Abs(l.SlopePerHour) > 1e-6 || math.Abs(l.PerActive-perSession/1024.0) > 1e-6) {
			t.Errorf("tree RSS: slope %v MB/h, %v MB per active session; want 0 and %v", l.SlopePerHour, l.PerActive, perSession/1024.0)
		}
	}
}
