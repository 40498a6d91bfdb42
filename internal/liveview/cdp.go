package liveview

import (
	"context"
	"errors"
	"fmt"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/live"
)

// Attach attaches to a page through internal/live, the proxy's own CDP
// connection.
func Attach(ctx context.Context, endpoint, targetID string) (Page, error) {
	p, err := live.Attach(ctx, endpoint, targetID)
	if err != nil {
		return nil, err
	}
	return livePage{p}, nil
}

// livePage is internal/live's Page in this package's types, which are
// the same structs.
type livePage struct{ *live.Page }

func (p livePage) Tabs(ctx context.Context) ([]Tab, error) {
	tabs, err := p.Page.Tabs(ctx)
	out := make([]Tab, len(tabs))
	for i, t := range tabs {
		out[i] = Tab(t)
	}
	return out, err
}

func (p livePage) Screencast(ctx context.Context, o Options, frame func(Frame)) error {
	err := p.Page.Screencast(ctx, live.Options(o), func(f live.Frame) { frame(Frame(f)) })
	if errors.Is(err, live.ErrGone) {
		return fmt.Errorf("%w: %w", ErrGone, err)
	}
	return err
}

func (p livePage) Mouse(ctx context.Context, m Mouse) error { return p.Page.Mouse(ctx, live.Mouse(m)) }
