package answer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Bounds on what Ingest reads from a worker's output dir.
const (
	maxSnapshotFileBytes = 64 << 20
	maxImageFileBytes    = 64 << 20
	// MaxStateFileBytes also bounds the state a worker hands back by program
	// (SaveState with IndexedDB), which never goes through a file.
	MaxStateFileBytes = 16 << 20
	// maxConsoleRangeBytes bounds one call's console lines; beyond it the
	// range is cut at a line boundary and an error reported.
	maxConsoleRangeBytes = 16 << 20
	// maxConsoleScanBytes bounds how far into a console log Ingest reads to
	// reach a range (the log grows for as long as the page stays loaded).
	maxConsoleScanBytes = 512 << 20
)

// Ingested is the content of one call, taken from the result and the files it
// links.
type Ingested struct {
	// Snapshot is the page snapshot yaml, exact bytes.
	Snapshot string
	// ConsoleRaw is this call's console log lines, exact bytes.
	ConsoleRaw string
	// Console are those lines parsed; RefID is left for the caller.
	Console []proxy.ConsoleEntry
	// Images are the inline images or, without any, the linked png/jpeg.
	// Seq counts from 0; RefID is left for the caller.
	Images []proxy.Image
	// StorageState is the linked storage-state-*.json (browser_storage_state),
	// exact bytes: its file is removed, so this is the only copy.
	StorageState []byte
}

// Ingest collects the content of a parsed result: the inline snapshot or the
// linked snapshot file, the console line range, the images and a storage
// state. It then removes the files it consumed, but never a console log: the
// worker keeps appending to it (it goes with the output dir).
//
// The paths come from worker output that pages can influence, so only regular
// files inside outputDir are read or removed (os.Root: no "..", no symlink
// out), and every read is size-bounded. Console entries are timestamped from
// the log file's start time (in its name) plus their offset, or now when the
// name does not carry it.
//
// The returned Ingested is never nil: it holds whatever could be collected,
// and the error (if any) lists what could not.
func Ingest(p *Parsed, outputDir string, now time.Time) (*Ingested, error) {
	out := &Ingested{}
	if p == nil {
		return out, errors.New("ingest: nil result")
	}
	for i, img := range p.Images {
		out.Images = append(out.Images, proxy.Image{Seq: i, MimeType: img.MimeType, Data: img.Data})
	}
	if p.SnapshotInline != "" {
		out.Snapshot = p.SnapshotInline
	}
	needFiles := (p.SnapshotInline == "" && p.SnapshotFile != "") || p.ConsoleFile != "" || len(p.LinkedFiles) > 0
	if !needFiles {
		return out, nil
	}
	if outputDir == "" {
		return out, errors.New("ingest: empty output dir")
	}
	dir, err := filepath.Abs(outputDir)
	if err != nil {
		return out, fmt.Errorf("ingest: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return out, fmt.Errorf("ingest: %w", err)
	}
	defer root.Close()

	in := ingester{root: root, dir: dir, consumed: map[string]bool{}}
	if p.SnapshotInline == "" && p.SnapshotFile != "" {
		if data, rel, err := in.read(p.SnapshotFile, maxSnapshotFileBytes); err != nil {
			in.fail("snapshot", err)
		} else {
			out.Snapshot = string(data)
			in.consume(rel)
		}
	}
	if p.ConsoleFile != "" {
		raw, err := in.readLines(p.ConsoleFile, p.ConsoleFrom, p.ConsoleTo)
		if err != nil {
			in.fail("console", err)
		}
		out.ConsoleRaw = raw
		out.Console = parseConsoleRange(raw, consoleLogStart(p.ConsoleFile), now)
	}
	for _, f := range p.LinkedFiles {
		switch kind := linkedKind(f); kind {
		case "image":
			if len(p.Images) > 0 {
				// The inline part is the same picture; the file is a duplicate
				// to clean up.
				if rel, err := in.rel(f); err == nil && in.isRegular(rel) {
					in.consume(rel)
				}
				continue
			}
			data, rel, err := in.read(f, maxImageFileBytes)
			if err != nil {
				in.fail("image", err)
				continue
			}
			out.Images = append(out.Images, proxy.Image{Seq: len(out.Images), MimeType: imageMime(f), Data: data})
			in.consume(rel)
		case "storage-state":
			data, rel, err := in.read(f, MaxStateFileBytes)
			if err != nil {
				in.fail("storage state", err)
				continue
			}
			out.StorageState = data
			in.consume(rel)
		}
	}
	in.removeConsumed()
	return out, errors.Join(in.errs...)
}

// linkedKind says what a linked file is, by name.
func linkedKind(path string) string {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case strings.HasSuffix(base, ".png"), strings.HasSuffix(base, ".jpeg"), strings.HasSuffix(base, ".jpg"):
		return "image"
	case strings.HasPrefix(base, "storage-state") && strings.HasSuffix(base, ".json"):
		return "storage-state"
	}
	return ""
}

func imageMime(path string) string {
	if strings.HasSuffix(strings.ToLower(path), ".png") {
		return "image/png"
	}
	return "image/jpeg"
}

// ingester reads and removes files confined to one output dir.
type ingester struct {
	root     *os.Root
	dir      string
	consumed map[string]bool
	order    []string
	errs     []error
}

func (in *ingester) fail(what string, err error) {
	in.errs = append(in.errs, fmt.Errorf("ingest %s: %w", what, err))
}

// rel maps a path from worker output to a path relative to the output dir,
// refusing anything that leaves it lexically; os.Root refuses symlinks that
// leave it.
func (in *ingester) rel(path string) (string, error) {
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(in.dir, p)
	}
	rel, err := filepath.Rel(in.dir, filepath.Clean(p))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%q is outside the output dir", path)
	}
	return rel, nil
}

func (in *ingester) isRegular(rel string) bool {
	fi, err := in.root.Stat(rel)
	return err == nil && fi.Mode().IsRegular()
}

// open opens a regular file inside the root without blocking on a FIFO.
func (in *ingester) open(path string) (*os.File, string, os.FileInfo, error) {
	rel, err := in.rel(path)
	if err != nil {
		return nil, "", nil, err
	}
	fi, err := in.root.Stat(rel)
	if err != nil {
		return nil, "", nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, "", nil, fmt.Errorf("%q is not a regular file", path)
	}
	f, err := in.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", nil, err
	}
	return f, rel, fi, nil
}

func (in *ingester) read(path string, max int64) ([]byte, string, error) {
	f, rel, fi, err := in.open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, "", fmt.Errorf("%q is %d bytes, over the %d limit", path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %q: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, "", fmt.Errorf("%q grew over the %d limit", path, max)
	}
	return data, rel, nil
}

// readLines returns lines from..to (1-based, inclusive) of a console log,
// exact bytes including their newlines.
func (in *ingester) readLines(path string, from, to int) (string, error) {
	if from < 1 || to < from {
		return "", fmt.Errorf("bad line range %d-%d", from, to)
	}
	f, _, _, err := in.open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReader(io.LimitReader(f, maxConsoleScanBytes))
	var out strings.Builder
	line := 1
	for line <= to {
		chunk, err := br.ReadSlice('\n')
		if line >= from && len(chunk) > 0 {
			if out.Len()+len(chunk) > maxConsoleRangeBytes {
				return cutAtLine(out.String()), fmt.Errorf("%q lines %d-%d exceed %d bytes", path, from, to, maxConsoleRangeBytes)
			}
			out.Write(chunk)
		}
		switch {
		case err == nil:
			line++
		case errors.Is(err, bufio.ErrBufferFull):
			// Same line continues.
		case errors.Is(err, io.EOF):
			last := line - 1 // the last complete line; a final one may lack "\n"
			if len(chunk) > 0 {
				last = line
			}
			if last < to {
				return out.String(), fmt.Errorf("%q ends at line %d, before line %d", path, last, to)
			}
			return out.String(), nil
		default:
			return out.String(), fmt.Errorf("read %q: %w", path, err)
		}
	}
	return out.String(), nil
}

// cutAtLine drops a trailing partial line.
func cutAtLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return ""
}

func (in *ingester) consume(rel string) {
	if !in.consumed[rel] {
		in.consumed[rel] = true
		in.order = append(in.order, rel)
	}
}

// removeConsumed deletes the files read, except console logs, which the
// worker appends to across calls (a forged link could name one).
func (in *ingester) removeConsumed() {
	for _, rel := range in.order {
		base := strings.ToLower(filepath.Base(rel))
		if strings.HasSuffix(base, ".log") || strings.HasPrefix(base, "console-") {
			continue
		}
		if err := in.root.Remove(rel); err != nil && !errors.Is(err, os.ErrNotExist) {
			in.fail("cleanup", err)
		}
	}
}

// consoleLogStart reads the start time upstream encodes in a console log's
// name ("console-2026-11-23T09-19-40-354Z.log": toISOString with ':' and '.'
// replaced by '-'); the lines' "[  173ms]" offsets count from it.
func consoleLogStart(path string) time.Time {
	base := filepath.Base(path)
	stamp, ok := strings.CutPrefix(base, "console-")
	if !ok {
		return time.Time{}
	}
	stamp = strings.TrimSuffix(stamp, ".log")
	// 2026-11-23T09-19-40-354Z
	if len(stamp) != len("2006-01-02T15-04-05-000Z") || stamp[10] != 'T' {
		return time.Time{}
	}
	iso := stamp[:13] + ":" + stamp[14:16] + ":" + stamp[17:19] + "." + stamp[20:]
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return time.Time{}
	}
	return t
}

// parseConsoleRange groups log lines into entries (a line without a time
// prefix continues the previous entry's message) and parses each.
func parseConsoleRange(raw string, start, now time.Time) []proxy.ConsoleEntry {
	raw = strings.TrimSuffix(raw, "\n")
	if raw == "" {
		return nil
	}
	var groups []string
	for line := range strings.SplitSeq(raw, "\n") {
		if _, _, ok := splitTimePrefix(line); ok || len(groups) == 0 {
			groups = append(groups, line)
			continue
		}
		groups[len(groups)-1] += "\n" + line
	}
	entries := make([]proxy.ConsoleEntry, 0, len(groups))
	for _, g := range groups {
		e, offset, hasOffset, ok := parseConsoleEntry(g)
		if !ok {
			// Lines before the first entry of the range: keep them rather
			// than lose them.
			e = proxy.ConsoleEntry{Level: proxy.LevelInfo, Message: g}
		}
		e.Timestamp = now
		if hasOffset && !start.IsZero() {
			e.Timestamp = start.Add(time.Duration(offset) * time.Millisecond)
		}
		entries = append(entries, e)
	}
	return entries
}

// RemoveStateFiles removes the storage-state files among linked that are
// still in dir. Like Ingest, it touches only regular files inside dir.
func RemoveStateFiles(dir string, linked []string) error {
	var paths []string
	for _, f := range linked {
		if linkedKind(f) == "storage-state" {
			paths = append(paths, f)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	in := ingester{root: root, dir: dir}
	var errs []error
	for _, f := range paths {
		rel, err := in.rel(f)
		if err != nil || !in.isRegular(rel) {
			continue
		}
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
