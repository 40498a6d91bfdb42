package api

import (
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// handleDownload answers GET /content/{ref}/downloads/{name} with the
// stored bytes of a download. The bytes are a page's: served from the
// proxy's own origin they must never render there (an HTML download would
// run with the inspector's rights), so they come as an attachment,
// unsniffed and sandboxed.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) {
	ref := chi.URLParam(r, "ref")
	// The router matches the escaped path: a name sent as "a%2F..%2Fb" is
	// one segment, decoded here and refused by the content service.
	name, err := url.PathUnescape(chi.URLParam(r, "name"))
	if err != nil {
		s.writeErr(w, r, proxy.Errorf(proxy.EINVALID, "download: the name is not a valid path segment: %v", err))
		return
	}
	d, err := s.content.Download(r.Context(), ref, name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if wantsJSON(r) {
		s.writeJSON(w, http.StatusOK, wire.DownloadBody{Download: *d, Data: d.Data})
		return
	}
	h := w.Header()
	h.Set("Content-Type", d.MimeType)
	h.Set("Content-Length", strconv.Itoa(len(d.Data)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
	if cd := mime.FormatMediaType("attachment", map[string]string{"filename": d.Name}); cd != "" {
		h.Set("Content-Disposition", cd)
	} else {
		h.Set("Content-Disposition", "attachment")
	}
	h.Set(wire.DownloadSHA256Header, d.SHA256)
	_, _ = w.Write(d.Data)
}
