package main

import (
	"flag"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
)

// TestFill: every scenario that starts a proxy-server gets the common
// flags' server, and the stdio ones the bridge and call timeout, through
// the configuration fields fill sets by name: a field renamed in a scenario
// would otherwise stay zero without a word.
func TestFill(t *testing.T) {
	e := &env{server: bench.ServerConfig{Binary: "/root/bin/proxy-server", Dir: "/root"}, timeout: time.Minute, bridge: "/root/bin/mcp-bridge"}
	for _, c := range commands {
		if c.setup == nil || c.local {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := c.setup(flag.NewFlagSet(c.name, flag.ContinueOnError))
			v := reflect.ValueOf(cfg).Elem()
			e.fill(v)
			got := map[string]int{}
			var walk func(v reflect.Value)
			walk = func(v reflect.Value) {
				for i := range v.NumField() {
					f := v.Field(i)
					switch {
					case f.Type() == reflect.TypeOf(e.server) && cmp.Equal(f.Interface(), e.server):
						got["server"]++
					case f.Kind() == reflect.Struct && f.CanInterface():
						walk(f)
					case v.Type().Field(i).Name == "Bridge" && f.Interface() == e.bridge:
						got["bridge"]++
					}
				}
			}
			walk(v)
			want := map[string]int{"server": 1}
			if c.stdio {
				want["bridge"] = 1
			}
			if c.name == "all" {
				want = map[string]int{"server": 5, "bridge": 3}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fields filled (-want +got):\n%s", diff)
			}
		})
	}
}
