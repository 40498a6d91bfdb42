//go:build !livecdp

package liveview

import (
	"context"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Attach stands for internal/live's in a build without it: every live
// view is UPSTREAM_UNAVAILABLE.
func Attach(context.Context, string, string) (Page, error) {
	return nil, proxy.Errorf(proxy.EUNAVAILABLE, "this build has no live view")
}
