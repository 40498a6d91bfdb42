package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/stat and /proc/PID/stat times:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// CPUUsage is how the machine's CPU was used during a measurement window,
// so a result taken on a busy shared machine says so. Cores are in units of
// one fully busy CPU.
type CPUUsage struct {
	Seconds float64 `json:"seconds"`
	// MachineBusyCores is all non-idle CPU time (steal included) / Seconds.
	MachineBusyCores float64 `json:"machine_busy_cores"`
	StealCores       float64 `json:"steal_cores"`
	// ServerCores is the CPU of proxy-server and everything it started;
	// ServerByFamily splits it into proxy-server (the Go process itself),
	// node (the @playwright/mcp workers, exited ones included) and chromium.
	ServerCores    float64            `json:"server_cores"`
	ServerByFamily map[string]float64 `json:"server_cores_by_family"`
	// BenchCores is this benchmark process itself.
	BenchCores float64 `json:"bench_cores"`
	// OtherCores is the rest: other processes on the machine.
	OtherCores float64    `json:"other_cores"`
	LoadAvg1   [2]float64 `json:"loadavg1_start_end"`
}

func (u CPUUsage) String() string {
	return fmt.Sprintf("machine busy %.2f cores (proxy-server %.2f, node %.2f, chromium %.2f; bench %.2f; other processes %.2f; steal %.2f) over %.0f s; load average %.1f → %.1f",
		u.MachineBusyCores, u.ServerByFamily["proxy-server"], u.ServerByFamily["node"], u.ServerByFamily["chromium"],
		u.BenchCores, u.OtherCores, u.StealCores, u.Seconds, u.LoadAvg1[0], u.LoadAvg1[1])
}

type cpuMark struct {
	t           time.Time
	busy, steal uint64
	family      map[string]uint64
	self        uint64
	load1       float64
}

// cpuFamily is the family a process's own CPU counts in, and the family of
// the children it reaped: proxy-server reaps workers (node); Chromium reaps
// its own processes.
func cpuFamily(kind string) (self, reaped string) {
	switch {
	case kind == "proxy-server":
		return "proxy-server", "node"
	case kind == "node":
		return "node", "node"
	case strings.HasPrefix(kind, "chromium"):
		return "chromium", "chromium"
	}
	return "other", "other"
}

// markCPU reads the CPU counters now, for root's process tree.
func markCPU(root int) cpuMark {
	m := cpuMark{t: time.Now(), family: map[string]uint64{}}
	b, _ := os.ReadFile("/proc/stat")
	line, _, _ := strings.Cut(string(b), "\n")
	if f := strings.Fields(line); len(f) >= 9 && f[0] == "cpu" {
		v := func(i int) uint64 { n, _ := strconv.ParseUint(f[i], 10, 64); return n }
		// user nice system idle iowait irq softirq steal
		m.busy, m.steal = v(1)+v(2)+v(3)+v(6)+v(7)+v(8), v(8)
	}
	for _, p := range processTree(root) {
		self, reaped := cpuFamily(procKind(p))
		m.family[self] += p.CPUSelf
		m.family[reaped] += p.CPUReaped
	}
	if p, ok := readProc(os.Getpid()); ok {
		m.self = p.CPUSelf
	}
	b, _ = os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) > 0 {
		m.load1, _ = strconv.ParseFloat(f[0], 64)
	}
	return m
}

// cpuSince is the usage between two marks of the same root.
func cpuSince(a, b cpuMark) CPUUsage {
	secs := b.t.Sub(a.t).Seconds()
	u := CPUUsage{Seconds: secs, LoadAvg1: [2]float64{a.load1, b.load1}, ServerByFamily: map[string]float64{}}
	if secs <= 0 {
		return u
	}
	cores := func(x, y uint64) float64 {
		if y < x {
			return 0 // a process went away unreaped by the tree
		}
		return float64(y-x) / clockTicks / secs
	}
	u.MachineBusyCores = cores(a.busy, b.busy)
	u.StealCores = cores(a.steal, b.steal)
	for fam, end := range b.family {
		c := cores(a.family[fam], end)
		u.ServerByFamily[fam] = c
		u.ServerCores += c
	}
	u.BenchCores = cores(a.self, b.self)
	u.OtherCores = max(0, u.MachineBusyCores-u.ServerCores-u.BenchCores)
	return u
}
