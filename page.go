package proxy

import "context"

// PageService reads what a session's browser shows now: its pages (tabs),
// an element of a page's latest snapshot, a page's network requests. It
// backs the MCP page, element and network-log resources. A read never
// starts a browser: a session without a live worker (suspended, or left by
// an earlier server) has its pages answered from the record, and no
// elements or requests (PAGE_NOT_FOUND).
type PageService interface {
	// Pages lists a session's pages in upstream's tab order.
	Pages(ctx context.Context, sessionID string) ([]Page, error)
	// Element describes the element with ref (e14, f1e3) in the latest
	// snapshot of a session's page.
	Element(ctx context.Context, sessionID string, page int, ref string) (*Element, error)
	// NetworkLog lists a page's recent requests, oldest first.
	NetworkLog(ctx context.Context, sessionID string, page int) ([]NetworkEntry, error)
}

// Page is one page (tab) of a session. Index is upstream's tab index, as
// browser_tabs numbers them.
type Page struct {
	Index   int    `json:"index"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	Current bool   `json:"current"`
	// Viewport is nil when the page is not live (Live false).
	Viewport *Viewport `json:"viewport"`
	// Live is false for a page answered from the record: the session's
	// last page while its browser is closed.
	Live bool `json:"live"`
}

// Element is one element of a page's latest snapshot.
type Element struct {
	Ref        string            `json:"ref"`
	Tag        string            `json:"tag"`
	Attributes map[string]string `json:"attributes"`
	// BoundingBox is nil when the element is not rendered.
	BoundingBox *Box `json:"bounding_box"`
}

// Box is an element's bounding box in CSS pixels, relative to the main
// frame's viewport.
type Box struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// NetworkEntry is one request of a page, as Playwright saw it.
type NetworkEntry struct {
	Method       string `json:"method"`
	URL          string `json:"url"`
	ResourceType string `json:"resource_type"`
	// Status is nil while no response came (pending, failed).
	Status  *int   `json:"status"`
	Failure string `json:"failure,omitempty"`
	// Timing is Playwright's resource timing: StartTime in ms since the
	// epoch, every other field in ms after it, -1 when not reached.
	Timing *NetworkTiming `json:"timing"`
}

// NetworkTiming is Playwright's Request.timing().
type NetworkTiming struct {
	StartTime             float64 `json:"start_time"`
	DomainLookupStart     float64 `json:"domain_lookup_start"`
	DomainLookupEnd       float64 `json:"domain_lookup_end"`
	ConnectStart          float64 `json:"connect_start"`
	SecureConnectionStart float64 `json:"secure_connection_start"`
	ConnectEnd            float64 `json:"connect_end"`
	RequestStart          float64 `json:"request_start"`
	ResponseStart         float64 `json:"response_start"`
	ResponseEnd           float64 `json:"response_end"`
}
