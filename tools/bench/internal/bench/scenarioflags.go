package bench

// The flags of the scenarios of the other bench files, moved here from
// tools/bench/commands.go as they were (names, defaults, checks).

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func (c *SessionsConfig) Flags(fs *flag.FlagSet) {
	c.WarmPools = []int{1, 0}
	fs.IntVar(&c.Iterations, "n", 30, "iterations per measurement")
	fs.DurationVar(&c.RefillWait, "refill-wait", 2*time.Second, "untimed sleep before each create so the warm pool can refill")
	fs.StringVar(&c.NavPage, "nav-page", "table", "page for the navigation timings: form, table or catalogue")
	fs.Var((*IntList)(&c.WarmPools), "warm-pools", "PROXY_WARM_POOL values to measure")
	fs.DurationVar(&c.StartupWait, "startup-wait", 5*time.Second, "untimed pause after the server listens, before the first create")
	fs.IntVar(&c.PlainStarts, "plain-n", 10, "times a plain @playwright/mcp is started and navigated, as the baseline (0: skip)")
	fs.IntVar(&c.ProfileCookies, "profile-cookies", 50, "cookies of the login profile whose creates are timed beside plain ones (0: skip)")
	fs.IntVar(&c.ProfileOrigins, "profile-origins", 10, "sites the profile's cookies are spread over")
	fs.IntVar(&c.ProfileStorageOrigins, "profile-storage-origins", 0, "of those sites, how many also hold localStorage in the profile (the browser visits each such origin to fill it)")
}

func (c *SessionsConfig) Check() error {
	if c.Iterations <= 0 || c.Iterations > 1000 {
		return fmt.Errorf("-n %d: want 1..1000", c.Iterations)
	}
	if _, ok := Pages[c.NavPage]; !ok {
		return fmt.Errorf("-nav-page %q: want form, table or catalogue", c.NavPage)
	}
	return nil
}

func (c *ConcurrencyConfig) Flags(fs *flag.FlagSet) {
	c.Levels, c.Pages = []int{1, 10, 25, 50, 100}, []string{"catalogue", "form"}
	fs.Var((*IntList)(&c.Levels), "levels", "numbers of concurrent sessions")
	fs.DurationVar(&c.Duration, "duration", 60*time.Second, "load duration per level: no call starts after it (the calls in flight finish; the report gives the measured window)")
	fs.Var((*PageList)(&c.Pages), "pages", "pages the sessions navigate to, in turn: `list` of form, table, catalogue (catalogue,form is the memory scenario on the 1,500-item page; form alone is a light page)")
	fs.IntVar(&c.MaxIterations, "max-iterations", 10000, "bound on navigate/snapshot/click rounds per session per level")
	fs.IntVar(&c.WarmPool, "warm-pool", 1, "PROXY_WARM_POOL")
	fs.IntVar(&c.MaxSessions, "max-sessions", 0, "PROXY_MAX_SESSIONS (0: the largest level)")
	fs.IntVar(&c.CreateConcurrency, "create-concurrency", 10, "sessions created at once at the start of a level (each starts a worker process)")
	fs.Func("min-available-mb", "memory guard: stop a level's load early when MemAvailable falls below this (0: off) (default 2048)", func(s string) error {
		var mb int64
		_, err := fmt.Sscan(s, &mb)
		c.MinAvailableKB = mb * 1024
		return err
	})
	c.MinAvailableKB = 2048 * 1024
}

func (c *ConcurrencyConfig) Check() error {
	for _, l := range c.Levels {
		if l < 1 || l > 500 {
			return fmt.Errorf("-levels: %d: want 1..500", l)
		}
	}
	if c.Duration <= 0 || c.Duration > time.Hour {
		return fmt.Errorf("-duration %s: want (0, 1h]", c.Duration)
	}
	return nil
}

func (c *IdleConfig) Flags(fs *flag.FlagSet) {
	c.Levels = []int{0, 10, 25, 50}
	fs.Var((*IntList)(&c.Levels), "idle", "numbers of idle sessions")
	fs.IntVar(&c.Navigations, "navigations", 20, "timed navigations (and snapshots) of the active session per level")
	fs.IntVar(&c.WarmPool, "warm-pool", 1, "PROXY_WARM_POOL")
}

func (c *IdleConfig) Check() error {
	for _, l := range c.Levels {
		if l > 200 {
			return fmt.Errorf("-idle: %d: want at most 200", l)
		}
	}
	if c.Navigations < 1 || c.Navigations > 1000 {
		return fmt.Errorf("-navigations %d: want 1..1000", c.Navigations)
	}
	return nil
}

func (c *SoakConfig) Flags(fs *flag.FlagSet) {
	c.Pages = []string{"catalogue", "form", "table"}
	fs.IntVar(&c.Sessions, "sessions", 10, "sessions running traffic")
	fs.DurationVar(&c.Duration, "duration", 30*time.Minute, "measured time after the warm-up")
	fs.DurationVar(&c.Interval, "interval", time.Minute, "time between samples")
	fs.IntVar(&c.Readings, "readings", 6, "readings averaged into each sample after the first, spread over the interval before it (1: one instantaneous reading)")
	fs.DurationVar(&c.WarmUp, "warmup", time.Minute, "traffic before the first sample (which the trend leaves out)")
	fs.DurationVar(&c.IdleTimeout, "idle", 20*time.Second, "PROXY_SESSION_IDLE_TIMEOUT")
	fs.IntVar(&c.MaxSessions, "max-sessions", 0, "PROXY_MAX_SESSIONS (at least max(10, -sessions))")
	fs.IntVar(&c.WarmPool, "warm-pool", 1, "PROXY_WARM_POOL")
	fs.Float64Var(&c.LongPauseProb, "long-pause", 0.2, "probability that the pause after a round is longer than the idle timeout (the session is suspended, then resumed)")
	fs.Var((*PageList)(&c.Pages), "pages", "pages the sessions navigate to, at random")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the think times")
}

func (c *SoakConfig) Check() error {
	switch {
	case c.Sessions < 1 || c.Sessions > 100:
		return fmt.Errorf("-sessions %d: want 1..100", c.Sessions)
	case c.Interval <= 0 || c.Duration < c.Interval || c.Duration > 48*time.Hour:
		return fmt.Errorf("-duration %s, -interval %s: want 0 < interval ≤ duration ≤ 48h", c.Duration, c.Interval)
	case c.Readings < 1 || c.Readings > 60 || c.Interval/time.Duration(c.Readings) < time.Second:
		return fmt.Errorf("-readings %d: want 1..60 and readings at least 1s apart (-interval %s)", c.Readings, c.Interval)
	case c.IdleTimeout < time.Second:
		return fmt.Errorf("-idle %s: want at least 1s", c.IdleTimeout)
	case c.LongPauseProb < 0 || c.LongPauseProb > 1:
		return fmt.Errorf("-long-pause %v: want 0..1", c.LongPauseProb)
	}
	return nil
}

func (c *LiveConfig) Flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.Window, "window", 10*time.Second, "how long each viewer watches the still and the busy page")
	fs.IntVar(&c.Changes, "changes", 20, "colour flips timed for change-to-frame")
}

func (c *LiveConfig) Check() error {
	if c.Window < time.Second || c.Window > 10*time.Minute {
		return fmt.Errorf("-window %s: want 1s..10m", c.Window)
	}
	if c.Changes < 1 || c.Changes > 600 {
		return fmt.Errorf("-changes %d: want 1..600", c.Changes)
	}
	return nil
}

// kib is a flag.Value in KiB for a field in bytes.
type kib struct{ n *int }

func (k kib) String() string {
	if k.n == nil {
		return "0"
	}
	return fmt.Sprint(*k.n >> 10)
}

func (k kib) Set(s string) error {
	_, err := fmt.Sscan(s, k.n)
	*k.n <<= 10
	return err
}

func (c *StoreConfig) Flags(fs *flag.FlagSet) {
	c.SnapshotBytes, c.SearchSnapshotBytes = 100<<10, 1024<<10
	fs.DurationVar(&c.Duration, "duration", 20*time.Second, "duration of each ingest run (without readers, then with them)")
	fs.IntVar(&c.Writers, "writers", 4, "goroutines recording calls")
	fs.IntVar(&c.Readers, "readers", 4, "goroutines querying (get_content with search_for, GetResponse) during the second ingest run")
	fs.IntVar(&c.SearchIterations, "n", 200, "get_content search iterations on the large snapshot")
	fs.Var(kib{&c.SnapshotBytes}, "snapshot-kb", "page snapshot size of each ingested call, KiB")
	fs.Var(kib{&c.SearchSnapshotBytes}, "search-kb", "size of the snapshot searched, KiB")
	fs.StringVar(&c.SearchTerm, "term", StoreSearchTerm, "search_for term of the search run (the generated snapshot has it in a handful of lines)")
	fs.StringVar(&c.Dir, "dir", "", "directory for the temporary databases (default: the system temp directory)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the databases")
}

func (c *StoreConfig) Check() error {
	switch {
	case c.Duration <= 0 || c.Duration > time.Hour:
		return fmt.Errorf("-duration %s: want (0, 1h]", c.Duration)
	case c.Writers < 1 || c.Writers > 64:
		return fmt.Errorf("-writers %d: want 1..64", c.Writers)
	case c.Readers < 0 || c.Readers > 64:
		return fmt.Errorf("-readers %d: want 0..64", c.Readers)
	case c.SearchIterations < 1 || c.SearchIterations > 100000:
		return fmt.Errorf("-n %d: want 1..100000", c.SearchIterations)
	case c.SnapshotBytes < 1<<10 || c.SnapshotBytes > 64<<20 || c.SearchSnapshotBytes < 1<<10 || c.SearchSnapshotBytes > 64<<20:
		return fmt.Errorf("-snapshot-kb and -search-kb: want 1..65536")
	}
	return nil
}

func (c *OverheadConfig) Flags(fs *flag.FlagSet) {
	fs.IntVar(&c.Iterations, "n", 200, "timed A/B pairs per call kind (browser_evaluate, browser_snapshot)")
	fs.IntVar(&c.Warmup, "warmup", 20, "untimed A/B rounds before the timed ones")
	fs.StringVar(&c.Page, "page", "table", "page both sides sit on: form, table or catalogue")
	fs.IntVar(&c.SettleMS, "timeout-settle", 0, "@playwright/mcp --timeout-settle in ms on both sides (-1: upstream's default, 500 ms)")
	fs.BoolVar(&c.StrictOrder, "strict-order", false, "A before B in every pair (default: the order flips every round, AB, BA, …)")
	fs.BoolVar(&c.Hop, "hop", true, "also a side C, plain @playwright/mcp on a browser server launched like the proxy's shared browser, splitting B − A into the shared browser's hop and the proxy's own part")
	fs.BoolVar(&c.Direct, "http", false, "also a side F, the same client straight to proxy-server's Streamable HTTP endpoint (/mcp) with no mcp-bridge, splitting B − A into what a client that speaks HTTP pays and what the bridge adds")
	fs.StringVar(&c.OtherBridge, "other-bridge", "", "also a side E, the proxy path through this other mcp-bridge `binary` on the same server, compared with B call by call in the same rounds")
	// Relay holds this program's arguments for its relays; the caller puts
	// the program's path in front.
	c.Relay = []string{"relay", "--"}
	fs.BoolFunc("relay", "with -hop, also a side D, side C's upstream behind two minimal Go relays (bench relay), splitting the proxy's own part into the floor of such a path and the proxy's work above it (default true)", func(s string) error {
		on, err := strconv.ParseBool(s)
		if !on {
			c.Relay = nil
		}
		return err
	})
}

func (c *OverheadConfig) Check() error {
	switch {
	case c.Iterations < 1 || c.Iterations > 100000:
		return fmt.Errorf("-n %d: want 1..100000", c.Iterations)
	case c.Warmup < 0 || c.Warmup > 10000:
		return fmt.Errorf("-warmup %d: want 0..10000", c.Warmup)
	case c.SettleMS < -1 || c.SettleMS > 60000:
		return fmt.Errorf("-timeout-settle %d: want -1..60000", c.SettleMS)
	}
	if _, ok := Pages[c.Page]; !ok {
		return fmt.Errorf("-page %q: want form, table or catalogue", c.Page)
	}
	if c.OtherBridge != "" {
		if _, err := os.Stat(c.OtherBridge); err != nil {
			return fmt.Errorf("-other-bridge: %w", err)
		}
	}
	return nil
}

func (c *BytesConfig) Flags(fs *flag.FlagSet) {
	fs.IntVar(&c.Item, "item", 742, "catalogue item whose button the task clicks")
	fs.BoolVar(&c.WithFind, "find", true, "also run the plain side with upstream's browser_find instead of browser_snapshot on the catalogue")
}

func (c *BytesConfig) Check() error {
	if c.Item < 1 || c.Item > CatalogueItems {
		return fmt.Errorf("-item %d: want 1..%d", c.Item, CatalogueItems)
	}
	return nil
}

func (c *TokensConfig) Flags(fs *flag.FlagSet) {
	fs.Func("tasks", "comma-separated `list` of tasks to run (default all: "+strings.Join(TokensTaskNames(), ",")+")", func(s string) error {
		c.Tasks = nil
		for t := range strings.SplitSeq(s, ",") {
			if t = strings.TrimSpace(t); t == "" {
				return errors.New("an empty task name")
			}
			c.Tasks = append(c.Tasks, t)
		}
		return nil
	})
}
