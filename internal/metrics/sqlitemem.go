//go:build memory.counters

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"modernc.org/libc"
)

// sqliteAllocator reports the memory SQLite's allocator (modernc.org/libc,
// which maps its own, outside Go's runtime) holds. modernc.org/memory counts
// only when built with the memory.counters tag, so the collector exists only
// in such a build: a diagnostic one, e.g. `go build -tags memory.counters`
// for a soak that must tell SQLite's memory from Go's.
func sqliteAllocator() []prometheus.Collector {
	gauge := func(name, help string, f func(libc.MemAllocatorStat) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help},
			func() float64 { return float64(f(libc.MemStat())) })
	}
	return []prometheus.Collector{
		gauge("sqlite_allocator_mapped_bytes", "Bytes SQLite's allocator has mapped from the OS, resident or not (memory.counters builds only).",
			func(s libc.MemAllocatorStat) int { return s.Bytes }),
		gauge("sqlite_allocator_allocations", "Live allocations of SQLite's allocator (memory.counters builds only).",
			func(s libc.MemAllocatorStat) int { return s.Allocs }),
	}
}
