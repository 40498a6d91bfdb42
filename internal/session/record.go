package session

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/redact"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// The record of one answered call: buildRecord turns what the worker
// returned into the response row, the call result and the session's new
// page, with every secret masked; record (call.go) writes them.

// recordInput is all that buildRecord needs: upstream's answer, the call it
// answers, the session's page before the call and the settings. Nothing in
// it is live, so a test can build a record from a recorded answer.
type recordInput struct {
	refID, sessionID, tool string

	fwd       forwarded
	raw       json.RawMessage   // upstream's answer, as the worker sent it
	outputDir string            // the worker's: where the files the answer links are
	at        time.Time         // when the answer came
	lastPage  content.Page      // the session's page as the previous call left it
	changes   bool              // the caller asked what the call changed
	pending   map[string]string // the session's downloads in progress: page name → the ref that started it

	redact      redaction
	full        bool  // PROXY_RESPONSE_MODE=full: upstream's answer goes back as it is
	inlineMax   int   // Options.InlineResultMax
	changesMax  int   // the change summary's byte budget (0: counts only)
	maxDownload int64 // Options.MaxDownloadBytes
}

// recordOutput is one answered call ready to be written and returned.
type recordOutput struct {
	// What the store writes, in one transaction.
	response  *proxy.Response
	console   []proxy.ConsoleEntry
	images    []proxy.Image
	downloads []proxy.Download
	activity  *proxy.SessionActivity
	// What the caller gets, and the bytes kept in the record.
	result *proxy.CallResult
	stored int
	// lastPage is the session's page after the call.
	lastPage content.Page
	// pending is the session's downloads in progress after the call.
	pending map[string]string
	// What could not be read of the answer, for the log: the record holds
	// the rest.
	parseErr, ingestErr error
}

// buildRecord parses upstream's answer, takes in the snapshot, console
// lines and images it links (Ingest reads those files from in.outputDir and
// removes them), masks everything, and builds the response row, the call
// result with its metadata and change summary, and the session's new page.
func buildRecord(in recordInput) recordOutput {
	fwd, refID, at := in.fwd, in.refID, in.at
	resp := &proxy.Response{RefID: refID, Status: proxy.StatusSuccess, Result: fwd.scrub(string(in.raw)), Timestamp: at}
	res := &proxy.CallResult{RefID: refID, SessionID: in.sessionID, Status: proxy.StatusSuccess, Timestamp: at, Metadata: proxy.CallMetadata{Tool: in.tool}}
	rec := recordOutput{response: resp, result: res, lastPage: in.lastPage}

	var ing *answer.Ingested
	parsed, err := answer.Parse(in.raw)
	if err != nil {
		rec.parseErr = err
		parsed = &answer.Parsed{}
	} else {
		ing, rec.ingestErr = answer.Ingest(parsed, in.outputDir, at)
		var dlErr error
		rec.downloads, dlErr = answer.IngestDownloads(parsed, in.outputDir, in.maxDownload)
		rec.ingestErr = errors.Join(rec.ingestErr, dlErr)
	}
	if ing == nil {
		ing = &answer.Ingested{}
	}
	out := fwd.interpret(parsed, resp, ing)
	// Masked only after Parse and Ingest, which need upstream's text and
	// file links as they are.
	dropped := in.redact.record(resp, parsed, ing)
	switch {
	case out.Err != nil:
		msg := in.redact.text(out.Err.Message)
		resp.Status, res.Status = proxy.StatusError, proxy.StatusError
		resp.ErrorMessage, res.Error = msg, msg
		setErrorCode(res, out.Err.Code, "")
	case parsed.IsError:
		resp.Status, res.Status = proxy.StatusError, proxy.StatusError
		resp.ErrorMessage, res.Error = parsed.ErrorText, parsed.ErrorText
		setErrorCode(res, toolset.Classify(parsed.ErrorText), "")
	case dropped > 0:
		// The tool ran, but what it made is not kept: say so plainly rather
		// than answer success with no image.
		msg := in.redact.imageOmitted(dropped) + "; take a smaller one (an element, type jpeg, a lower scale, no fullPage)"
		resp.Status, res.Status = proxy.StatusError, proxy.StatusError
		resp.ErrorMessage, res.Error = msg, msg
		setErrorCode(res, proxy.EINVALID, "Take a smaller screenshot: one element, type jpeg, a lower scale, no fullPage.")
	case fwd.ext != nil:
		res.Value = in.redact.doc(out.Value)
	}
	resp.ErrorCode = res.ErrorCode
	resp.PageSnapshot = ing.Snapshot
	resp.ConsoleLogs = ing.ConsoleRaw
	for i := range ing.Images {
		ing.Images[i].RefID = refID
		ing.Images[i].Seq = i
	}
	rec.console, rec.images = ing.Console, ing.Images
	// The session's last activity (and its last URL, when the page moved)
	// go in the response's transaction: one commit per answer.
	rec.activity = &proxy.SessionActivity{SessionID: in.sessionID, At: at}
	if parsed.PageURL != "" && parsed.PageURL != in.lastPage.URL {
		md, err := json.Marshal(proxy.SessionMetadata{LastURL: parsed.PageURL, LastTitle: parsed.PageTitle})
		if err == nil {
			rec.activity.Metadata = md
		}
	}
	rec.stored = len(resp.Result) + len(resp.PageSnapshot) + len(resp.ConsoleLogs)
	for _, im := range ing.Images {
		rec.stored += len(im.Data)
	}
	rec.pending = attributeDownloads(rec.downloads, parsed, refID, in.pending)
	for i := range rec.downloads {
		d := &rec.downloads[i]
		rec.stored += len(d.Data)
		described := *d
		described.Data = nil
		res.Downloads = append(res.Downloads, described)
	}
	res.DownloadsPending = parsed.Pending

	md := &res.Metadata
	md.PageURL, md.PageTitle = parsed.PageURL, parsed.PageTitle
	md.HasSnapshot = ing.Snapshot != ""
	md.SnapshotBytes = len(ing.Snapshot)
	md.HasConsoleLogs = len(ing.Console) > 0
	for _, e := range ing.Console {
		if e.Level == proxy.LevelError {
			md.ConsoleErrorCount++
		}
	}
	md.HasImage = len(ing.Images) > 0
	if res.Status == proxy.StatusSuccess {
		inlineResult(res, fwd.ext != nil, parsed, in.inlineMax)
	}
	if in.full {
		res.Upstream = json.RawMessage(resp.Result) // masked, as stored
	}
	if in.changes && !in.full {
		res.ConsoleErrors = content.ErrorLines(ing.Console, parsed.PageURL) // masked, as stored
	}
	if parsed.PageURL != "" {
		page := content.Page{URL: parsed.PageURL, Title: parsed.PageTitle, Snapshot: ing.Snapshot} // masked, as stored
		if in.changes && !in.full {
			res.Changes = content.Changes(in.lastPage, page, in.changesMax)
			res.Changes.URLAsSent = navigatedTo(fwd, parsed.PageURL)
			res.Changes.SameURL = in.lastPage.URL == parsed.PageURL
		}
		if page.Snapshot == "" && page.URL == in.lastPage.URL {
			page.Snapshot = in.lastPage.Snapshot // still the latest of this page
		}
		rec.lastPage = page
	} else if tabs, ok := content.ParseTabs(parsed.ResultText); ok && in.tool == "browser_tabs" {
		// Switching tabs reports no page, but the tab list names the one
		// now current: the next call's page is measured against it.
		for _, t := range tabs {
			if t.Current && t.URL != in.lastPage.URL {
				rec.lastPage = content.Page{URL: t.URL, Title: t.Title}
			}
		}
	}
	return rec
}

// maxPendingDownloads bounds the downloads a session remembers as in
// progress: a page that starts many and never lets them finish must not
// grow the session's memory.
const maxPendingDownloads = 64

// attributeDownloads gives each of a call's downloads the ref it is stored
// with: the call's own, or, for one the answer says finished without saying
// it started (it was still arriving when an earlier call answered), the ref
// of the call that started it. It returns the session's downloads still in
// progress after the call: the ones pending before, less those that
// finished, plus those this call started and did not see finish.
func attributeDownloads(downloads []proxy.Download, parsed *answer.Parsed, refID string, pending map[string]string) map[string]string {
	next := maps.Clone(pending)
	if next == nil {
		next = map[string]string{}
	}
	late := map[string]string{} // file name on disk → the page's name
	for _, pd := range parsed.Downloads {
		if pd.Late {
			late[filepath.Base(filepath.Clean(pd.Path))] = pd.Name
		}
	}
	for i := range downloads {
		d := &downloads[i]
		d.RefID = refID
		name, ok := late[d.Name]
		if !ok {
			continue
		}
		if from, ok := next[name]; ok {
			d.RefID = from
			delete(next, name)
		}
	}
	if len(next)+len(parsed.Pending) > maxPendingDownloads {
		clear(next)
	}
	for _, name := range parsed.Pending {
		if len(next) < maxPendingDownloads {
			next[name] = refID
		}
	}
	if len(next) == 0 {
		return nil
	}
	return next
}

// inlineResult puts the tool's own result in the answer when it is at most
// max bytes, so that reading one value takes one call, as upstream's
// answer does; a larger one is given as its size, read with get_content.
// A program's result is its Value, which /call carries whole for scripts
// whatever its size. JSON comes compact: browser_evaluate indents it, and
// the indentation is bytes the model pays for. A result that only links
// files upstream wrote (a screenshot's) holds nothing to read: the file is
// taken into the record, and the answer says so.
func inlineResult(res *proxy.CallResult, program bool, parsed *answer.Parsed, max int) {
	if program {
		if len(res.Value) > max {
			res.Metadata.ResultBytes = len(res.Value)
		}
		return
	}
	text := parsed.ResultText
	if text == "" || onlyFileLinks(text, parsed.LinkedFiles) {
		return
	}
	if json.Valid([]byte(text)) {
		var b bytes.Buffer
		if json.Compact(&b, []byte(text)) == nil {
			text = b.String()
		}
	}
	if len(text) > max {
		res.Metadata.ResultBytes = len(text)
		return
	}
	res.Metadata.Result = text
}

// onlyFileLinks reports whether every line of text is a markdown link to
// one of the files upstream wrote.
func onlyFileLinks(text string, files []string) bool {
	if len(files) == 0 {
		return false
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		linked := false
		for _, f := range files {
			if strings.HasPrefix(l, "- [") && strings.HasSuffix(l, "]("+f+")") {
				linked = true
				break
			}
		}
		if !linked {
			return false
		}
	}
	return true
}

// redaction is what keeps secrets out of the record and the answer: mask
// masks strings and JSON documents, and images over maxImage bytes (0: no
// limit) are not kept, imageOmitted saying so.
type redaction struct {
	mask         redact.Redactor
	maxImage     int64
	imageOmitted func(size int) string
}

// redaction is the one masking of everything recorded or returned: the
// secrets of the policy (PROXY_SECRETS_FILE), then the credentials of the
// vault (typed through placeholders), then the browsers' endpoints, in one
// walk of each document.
func (m *Manager) redaction() redaction {
	p := m.opts.Policy
	mask := p.Masker()
	vault, _ := m.creds.redactors()
	mask.Replacer = redact.Then(redact.Then(mask.Replacer, vault.Replacer), endpointMask{reserved: p.IsReserved})
	return redaction{mask: mask, maxImage: p.MaxImageBytes(), imageOmitted: p.ImageOmitted}
}

func (r redaction) text(s string) string { return r.mask.String(s) }

func (r redaction) doc(raw json.RawMessage) json.RawMessage { return r.mask.JSON(raw) }

// record masks secrets in everything a response row and its console rows
// hold, and drops images over the size limit. It reports the size of the
// largest image dropped (0: none).
func (r redaction) record(resp *proxy.Response, parsed *answer.Parsed, ing *answer.Ingested) int {
	resp.Result = string(r.doc(json.RawMessage(resp.Result)))
	resp.ErrorMessage = r.text(resp.ErrorMessage)
	ing.Snapshot = r.text(ing.Snapshot)
	ing.ConsoleRaw = r.text(ing.ConsoleRaw)
	for i := range ing.Console {
		ing.Console[i].Message = r.text(ing.Console[i].Message)
		if len(ing.Console[i].Location) > 0 {
			ing.Console[i].Location = r.doc(ing.Console[i].Location)
		}
	}
	parsed.PageURL = r.text(parsed.PageURL)
	parsed.PageTitle = r.text(parsed.PageTitle)
	parsed.ErrorText = r.text(parsed.ErrorText)
	parsed.ResultText = r.text(parsed.ResultText)

	limit, dropped := r.maxImage, 0
	if limit <= 0 {
		return 0
	}
	kept := ing.Images[:0]
	for _, im := range ing.Images {
		if int64(len(im.Data)) > limit {
			dropped = max(dropped, len(im.Data))
			continue
		}
		kept = append(kept, im)
	}
	ing.Images = kept
	return dropped
}

// scrub takes the program's encoded arguments out of upstream's answer.
func (f forwarded) scrub(raw string) string {
	if f.blob == "" {
		return raw
	}
	return strings.ReplaceAll(raw, f.blob, blobMark)
}

// interpret reads a program's answer; an image it returned becomes an image
// of the ref instead of base64 text in the record. For upstream's own
// tools it has nothing to do.
func (f forwarded) interpret(parsed *answer.Parsed, resp *proxy.Response, ing *answer.Ingested) toolset.Outcome {
	if f.ext == nil {
		return toolset.Outcome{}
	}
	out := toolset.Interpret(parsed.ResultText, errorText(parsed))
	if out.Image != nil {
		b64 := base64.StdEncoding.EncodeToString(out.Image.Data)
		resp.Result = strings.ReplaceAll(resp.Result, b64, imageMark)
		parsed.ResultText = strings.ReplaceAll(parsed.ResultText, b64, imageMark)
		ing.Images = append(ing.Images, proxy.Image{MimeType: out.Image.MimeType, Data: out.Image.Data})
	}
	return out
}

func errorText(p *answer.Parsed) string {
	if p.IsError {
		return p.ErrorText
	}
	return ""
}

// setErrorCode gives a failed call result its code, whether a retry can
// help, and what to do (suggestion overrides the code's own).
func setErrorCode(res *proxy.CallResult, code, suggestion string) {
	e := proxy.Errorf(code, "")
	retry := e.Retryable
	res.ErrorCode, res.Retryable, res.Suggestion = code, &retry, e.Suggestion
	if suggestion != "" {
		res.Suggestion = suggestion
	}
}

// navigatedTo reports whether fwd navigated to url, the URL the page is at
// after it (upstream adds the root path's slash to a bare origin).
func navigatedTo(fwd forwarded, url string) bool {
	if fwd.tool != "browser_navigate" {
		return false
	}
	var p struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(fwd.params, &p) != nil || p.URL == "" {
		return false
	}
	return p.URL == url || p.URL+"/" == url
}
