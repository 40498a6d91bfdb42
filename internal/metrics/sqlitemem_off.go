//go:build !memory.counters

package metrics

import "github.com/prometheus/client_golang/prometheus"

// sqliteAllocator is empty: without the memory.counters tag modernc.org/memory
// keeps no counts, and a gauge stuck at 0 would mislead.
func sqliteAllocator() []prometheus.Collector { return nil }
