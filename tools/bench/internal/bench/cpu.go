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
// one fully busy CPU. ServerCores is proxy-server and everything it
// started, split by family in ServerByFamily; BenchCores this process;
// OtherCores the rest of the machine.
type CPUUsage struct {
	Seconds          float64            `json:"seconds"`
	MachineBusyCores float64            `json:"machine_busy_cores"` // steal included
	StealCores       float64            `json:"steal_cores"`
	ServerCores      float64            `json:"server_cores"`
	ServerByFamily   map[string]float64 `json:"server_cores_by_family"`
	BenchCores       float64            `json:"bench_cores"`
	OtherCores       float64            `json:"other_cores"`
	LoadAvg1         [2]float64         `json:"loadavg1_start_end"`
}

func (u CPUUsage) String() string {
	return fmt.Sprintf("machine busy %.2f cores (proxy-server %.2f, node %.2f, chromium %.2f; bench %.2f; other processes %.2f; steal %.2f) over %.0f s; load average %.1f → %.1f",
		u.MachineBusyCores, u.ServerByFamily["proxy-server"], u.ServerByFamily["node"], u.ServerByFamily["chromium"],
		u.BenchCores, u.OtherCores, u.StealCores, u.Seconds, u.LoadAvg1[0], u.LoadAvg1[1])
}

type cpuMark struct {
	t                 time.Time
	busy, steal, self uint64
	family            map[string]uint64
	load1             float64
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
		// A process's reaped children count in a family of their own:
		// proxy-server reaps the node workers, Chromium its own processes.
		self, reaped := "other", "other"
		switch kind := procKind(p); {
		case kind == "proxy-server":
			self, reaped = kind, "node"
		case strings.HasPrefix(kind, "node"):
			self, reaped = "node", "node"
		case strings.HasPrefix(kind, "chromium"):
			self, reaped = "chromium", "chromium"
		}
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
	cores := func(x, y uint64) float64 {
		if y < x || secs <= 0 {
			return 0 // a process went away unreaped by the tree
		}
		return float64(y-x) / clockTicks / secs
	}
	u.MachineBusyCores, u.StealCores, u.BenchCores = cores(a.busy, b.busy), cores(a.steal, b.steal), cores(a.self, b.self)
	for fam, end := range b.family {
		u.ServerByFamily[fam] = cores(a.family[fam], end)
		u.ServerCores += u.ServerByFamily[fam]
	}
	u.OtherCores = max(0, u.MachineBusyCores-u.ServerCores-u.BenchCores)
	return u
}
