package bridge

// Procs is the GOMAXPROCS mcp-bridge sets for itself: 1, or 0 (leave it)
// when GOMAXPROCS is in its environment, where Go has already read it.
//
// Why 1: a bridge relays one conversation, a message at a time, and its
// work per tool call is a fraction of a millisecond. With more Ps, every
// hand-off between its goroutines (stdin reader, handler, HTTP transport)
// finds an idle P and wakes a thread for it, and on a small VM that halts
// idle CPUs each wake-up costs tens of microseconds on the call's path
// (docs/BENCHMARKS.md §1 has the figures).
func Procs(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return 0
	}
	return 1
}
