package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proxyserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// ProfileCommand is `proxy-server profile`: the operator's hand on login
// profiles. It opens the database itself (configured as serve is, with the
// same state key), so it works whether or not a server runs on it: SQLite's
// WAL lets both write.
type ProfileCommand struct{ Main *Main }

const profileUsage = `proxy-server profile list [-json]         the profiles: name, version, origins, updated, expiry, bytes
proxy-server profile import NAME FILE     store a Playwright storage state (FILE - = stdin) as NAME (new, or its next version)
proxy-server profile export NAME FILE     write NAME's storage state to FILE (created 0600; - = stdout)
proxy-server profile delete NAME          remove NAME; sessions started from it keep their own copy
Each also takes -db PATH (PROXY_DATABASE_PATH).`

// Run runs `profile list|import|export|delete`.
func (c *ProfileCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(c.Main.Stderr, profileUsage)
		return errors.New("profile: want list, import, export or delete")
	}
	sub, args := args[0], args[1:]
	var (
		run   func(ctx context.Context, db *store.DB, cfg config.Config, args []string) error
		nargs int
	)
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("proxy-server profile "+sub, flag.ContinueOnError)
	fs.StringVar(&cfg.DatabasePath, "db", cfg.DatabasePath, "SQLite database path (PROXY_DATABASE_PATH)")
	switch sub {
	case "list":
		asJSON := fs.Bool("json", false, "print the profiles as JSON, with the live sessions started from each")
		run = func(ctx context.Context, db *store.DB, _ config.Config, _ []string) error {
			return c.list(ctx, db, *asJSON)
		}
	case "import":
		run, nargs = c.importState, 2
	case "export":
		run, nargs = c.export, 2
	case "delete":
		run, nargs = c.delete, 1
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(c.Main.Stdout, profileUsage)
		return nil
	default:
		fmt.Fprintln(c.Main.Stderr, profileUsage)
		return fmt.Errorf("profile: unknown command %q: want list, import, export or delete", sub)
	}
	if help, err := c.Main.parseFlags(fs, args, profileUsage); help || err != nil {
		return err
	}
	if fs.NArg() != nargs {
		return fmt.Errorf("profile %s takes %d arguments, got %d (run 'proxy-server profile help')", sub, nargs, fs.NArg())
	}
	if nargs > 0 {
		if err := proxy.ValidProfileName("NAME", fs.Arg(0)); err != nil {
			return fmt.Errorf("profile %s: %w", sub, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Only import may start a database: reading one that is not there is
	// a wrong path, not an empty list.
	if _, err := os.Stat(cfg.DatabasePath); sub != "import" && errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("profile %s: no database at %s (PROXY_DATABASE_PATH, -db)", sub, cfg.DatabasePath)
	}
	db, err := proxyserver.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	err = run(ctx, db, cfg, fs.Args())
	if cerr := db.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing database: %w", cerr)
	}
	if err != nil {
		return fmt.Errorf("profile %s: %w", sub, err)
	}
	return nil
}

func (c *ProfileCommand) list(ctx context.Context, db *store.DB, asJSON bool) error {
	profiles, err := db.ListProfiles(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		live, err := db.SessionsInState(ctx, proxy.SessionActive, proxy.SessionSuspended)
		if err != nil {
			return err
		}
		for _, p := range profiles {
			p.Sessions = []string{}
			for _, s := range live {
				if s.Profile == p.Name {
					p.Sessions = append(p.Sessions, s.ID)
				}
			}
			slices.Sort(p.Sessions)
		}
		enc := json.NewEncoder(c.Main.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(profiles)
	}
	if len(profiles) == 0 {
		fmt.Fprintln(c.Main.Stdout, "no profiles")
		return nil
	}
	w := tabwriter.NewWriter(c.Main.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tVERSION\tORIGINS\tUPDATED\tEXPIRES\tBYTES")
	for _, p := range profiles {
		expires := "-"
		if p.CookiesExpireAt != nil {
			expires = p.CookiesExpireAt.Format(time.RFC3339)
		}
		origins := strings.Join(p.Origins, ",")
		if origins == "" {
			origins = "-"
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%d\n", p.Name, p.Version, origins, p.UpdatedAt.Format(time.RFC3339), expires, p.Bytes)
	}
	return w.Flush()
}

// importState stores FILE as profile NAME, checked as the HTTP API checks
// a PUT, and compacted.
func (c *ProfileCommand) importState(ctx context.Context, db *store.DB, cfg config.Config, args []string) error {
	name, file := args[0], args[1]
	var in io.Reader = c.Main.stdin()
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	raw, err := io.ReadAll(io.LimitReader(in, cfg.ProfileMaxBytes+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	if int64(len(raw)) > cfg.ProfileMaxBytes {
		return proxy.Errorf(proxy.ETOOLARGE, "%s holds more than PROXY_PROFILE_MAX_BYTES (%d bytes) of storage state", file, cfg.ProfileMaxBytes)
	}
	meta, err := proxy.CheckStorageState(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return fmt.Errorf("%s: %w", file, err) // CheckStorageState decoded it: not reached
	}
	p, err := db.PutProfile(ctx, name, compact.Bytes(), meta, time.Now(), -1)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Main.Stdout, "profile %s version %d (%d bytes)\n", p.Name, p.Version, p.Bytes)
	return nil
}

// export writes NAME's state to FILE through a temporary file (0600) that
// is renamed over it: FILE is never seen half-written, and is 0600 even
// when it existed with a wider mode.
func (c *ProfileCommand) export(ctx context.Context, db *store.DB, _ config.Config, args []string) error {
	name, file := args[0], args[1]
	state, version, err := db.ProfileState(ctx, name)
	if err != nil {
		return err
	}
	if file == "-" {
		_, err := fmt.Fprintf(c.Main.Stdout, "%s\n", state)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	if _, err := fmt.Fprintf(tmp, "%s\n", state); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	fmt.Fprintf(c.Main.Stdout, "profile %s version %d written to %s\n", name, version, file)
	return nil
}

func (c *ProfileCommand) delete(ctx context.Context, db *store.DB, _ config.Config, args []string) error {
	if err := db.DeleteProfile(ctx, args[0]); err != nil {
		return err
	}
	fmt.Fprintf(c.Main.Stdout, "profile %s deleted\n", args[0])
	return nil
}
