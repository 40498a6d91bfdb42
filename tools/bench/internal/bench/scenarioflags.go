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
)


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
