package api

import (
	"net/http"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// The browsers the proxy drives run pages nobody vouches for, on the same
// machine as the API. The Origin check does not stop a page's navigations
// (a link, a script's location change, a form, a frame): browsers send no
// Origin on GET navigations. Such a page, on a loopback origin or
// redirected through one, would load the API's answers into a session's
// page, where the model reads them: every session's ids and records.
//
// Browsers tell where a request comes from in Sec-Fetch-Site (sent to
// loopback, which they treat as a secure context): "same-origin" (the
// inspector's own pages), "none" (the address bar, a bookmark, a
// navigation the browser itself started) or "same-site"/"cross-site" (a
// page of another origin). The API answers the first two only. A request
// without the header is not from a browser that sends it: curl, SDKs and
// mcp-bridge go on to the other checks.
//
// A session's browser can still start a navigation the browser counts as
// its own (a tool's navigation, and the redirects it follows); the
// navigation policy refuses the proxy's own addresses for the first, and
// the session manager takes a page away from them after any call for the
// second.

// fromOtherPage reports whether r was started by a page of another origin.
func fromOtherPage(r *http.Request) bool {
	for _, v := range r.Header.Values("Sec-Fetch-Site") {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "same-origin", "none":
		default:
			return true
		}
	}
	return false
}

func refuseOtherPage(r *http.Request) *proxy.Error {
	site := strings.Join(r.Header.Values("Sec-Fetch-Site"), ", ")
	e := proxy.Errorf(proxy.EORIGIN, "requests started by a web page of another origin (Sec-Fetch-Site: %s) may not use this server", site)
	e.Details = map[string]any{"sec_fetch_site": site}
	e.Suggestion = "Open the inspector by typing its address (/ui), or call the API from a program, not from a page."
	return e
}
