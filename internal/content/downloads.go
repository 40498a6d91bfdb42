package content

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// maxDownloadName bounds a download's name as asked for: upstream's file
// names are far shorter, and a longer one is no name at all.
const maxDownloadName = 255

// Download returns one stored download of refID with its bytes, under the
// same visibility rule as Content. A name that could not be a download's
// (a path, "..", empty) is EINVALID: names are looked up in the record,
// never on disk, but such a name is a mistake worth saying so. A download
// that was over the size limit is EDOWNLOADMISSING, with a message that
// says it was not kept.
func (s *Service) Download(ctx context.Context, refID, name string) (*proxy.Download, error) {
	if err := CheckDownloadName(name); err != nil {
		return nil, err
	}
	if err := s.visible(ctx, refID); err != nil {
		return nil, err
	}
	if _, err := s.store.GetResponse(ctx, refID); err != nil {
		return nil, err
	}
	d, err := s.store.GetDownload(ctx, refID, name)
	if err != nil {
		return nil, err
	}
	if !d.Stored {
		return nil, proxy.Errorf(proxy.EDOWNLOADMISSING, "the download %q of ref_id %q was %s, over PROXY_MAX_DOWNLOAD_BYTES: it was not stored", name, refID, FormatSize(d.Size))
	}
	return d, nil
}

// CheckDownloadName refuses a name that is not a plain file name.
func CheckDownloadName(name string) error {
	switch {
	case name == "":
		return proxy.Errorf(proxy.EINVALID, "download: a name is required")
	case len(name) > maxDownloadName:
		return proxy.Errorf(proxy.EINVALID, "download: the name is over %d bytes", maxDownloadName)
	case strings.ContainsAny(name, "/\\\x00") || strings.Contains(name, ".."):
		return proxy.Errorf(proxy.EINVALID, "download: %q is not a file name (no /, \\ or ..): use a name from a download: line", name)
	}
	return nil
}

// DownloadText is the text of a download, or EINVALID when its bytes are
// not text (not UTF-8, NUL bytes, or content that sniffs as binary): the
// model gets the text of a CSV, and for a binary file where to fetch it.
func DownloadText(d *proxy.Download) (string, error) {
	if !utf8.Valid(d.Data) || bytes.IndexByte(d.Data, 0) >= 0 || !strings.HasPrefix(http.DetectContentType(d.Data), "text/") {
		e := proxy.Errorf(proxy.EINVALID, "the download %q of ref_id %q is not text (%s, %s)", d.Name, d.RefID, d.MimeType, FormatSize(d.Size))
		e.Suggestion = "Fetch its bytes over the HTTP API: GET /content/" + d.RefID + "/downloads/" + d.Name + "."
		return "", e
	}
	return string(d.Data), nil
}

// FormatSize is a file's size as answers show it: bytes, KB or MB (of
// 1000). Sizes that would round to 1000.0 KB are shown in MB.
func FormatSize(n int64) string {
	if n < 999_950 {
		return FormatBytes(int(n))
	}
	return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + " MB"
}
