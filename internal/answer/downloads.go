package answer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// IngestDownloads reads the files of the downloads p says finished, from
// outputDir, the worker's own directory (upstream saves a page's downloads
// there and nowhere else). Each becomes a Download named by its file's name
// on disk (upstream's sanitised form of the page's name, with no directory
// part). A file over maxBytes (0: no limit) is not read: its Download says
// how big it was, with Stored false, and the file is removed, so that what
// the record refused does not stay on disk either. A stored download's file
// stays where the worker saved it: the session's upload_file may send it on.
//
// Paths come from answer text a page can shape (the name it suggests is
// printed as it is), so only regular files inside outputDir are read (the
// same confinement as Ingest's), and a path named twice is read once.
// Downloads that could not be read are left out, and the error lists them.
func IngestDownloads(p *Parsed, outputDir string, maxBytes int64) ([]proxy.Download, error) {
	if p == nil || len(p.Downloads) == 0 {
		return nil, nil
	}
	if outputDir == "" {
		return nil, errors.New("ingest downloads: empty output dir")
	}
	dir, err := filepath.Abs(outputDir)
	if err != nil {
		return nil, fmt.Errorf("ingest downloads: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("ingest downloads: %w", err)
	}
	defer root.Close()
	in := ingester{root: root, dir: dir, consumed: map[string]bool{}}
	var out []proxy.Download
	seen := map[string]bool{}
	for _, d := range p.Downloads {
		rel, err := in.rel(d.Path)
		if err != nil {
			in.fail("download", err)
			continue
		}
		if seen[rel] {
			continue
		}
		seen[rel] = true
		dl, err := in.download(d.Path, rel, maxBytes)
		if err != nil {
			in.fail("download", err)
			continue
		}
		out = append(out, dl)
	}
	return out, errors.Join(in.errs...)
}

func (in *ingester) download(path, rel string, maxBytes int64) (proxy.Download, error) {
	name := filepath.Base(rel)
	f, _, fi, err := in.open(path)
	if err != nil {
		return proxy.Download{}, err
	}
	defer f.Close()
	if maxBytes > 0 && fi.Size() > maxBytes {
		if err := in.root.Remove(rel); err != nil && !errors.Is(err, os.ErrNotExist) {
			in.fail("download cleanup", err)
		}
		return proxy.Download{Name: name, MimeType: downloadMime(name, nil), Size: fi.Size()}, nil
	}
	limit := maxBytes
	if limit <= 0 {
		limit = fi.Size()
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return proxy.Download{}, fmt.Errorf("read %q: %w", path, err)
	}
	if int64(len(data)) > limit {
		return proxy.Download{}, fmt.Errorf("%q grew while it was read", path)
	}
	sum := sha256.Sum256(data)
	return proxy.Download{
		Name: name, MimeType: downloadMime(name, data), Size: int64(len(data)),
		SHA256: hex.EncodeToString(sum[:]), Stored: true, Data: data,
	}, nil
}

// downloadTypes are the types of common downloads by extension, so that the
// answer does not depend on the mime.types of the machine; others come from
// that table, then from the bytes.
var downloadTypes = map[string]string{
	".csv":  "text/csv; charset=utf-8",
	".tsv":  "text/tab-separated-values; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
	".md":   "text/markdown; charset=utf-8",
	".json": "application/json",
	".xml":  "application/xml",
	".html": "text/html; charset=utf-8",
	".pdf":  "application/pdf",
	".zip":  "application/zip",
	".gz":   "application/gzip",
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".bin":  "application/octet-stream",
}

// downloadMime is the content type of a download, from its name, else its
// bytes (nil: unknown, application/octet-stream).
func downloadMime(name string, data []byte) string {
	ext := strings.ToLower(filepath.Ext(name))
	if t, ok := downloadTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); ext != "" && t != "" {
		return t
	}
	if data == nil {
		return "application/octet-stream"
	}
	return http.DetectContentType(data)
}
