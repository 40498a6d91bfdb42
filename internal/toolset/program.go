package toolset

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Program is one tool call made ready for upstream: the arguments of
// browser_run_code_unsafe, and the encoded argument blob, which the caller
// removes from what it records (the arguments are recorded once, masked, as
// the request's params; in the echoed code they would escape masking).
type Program struct {
	Args json.RawMessage
	Blob string
}

// runtime is shared by every program. H.fail classifies what a tool threw
// into the documented codes; H.find waits for a selector and reports
// ELEMENT_NOT_FOUND; H.act turns an action that timed out on an element
// that exists into ELEMENT_NOT_INTERACTIVE.
const runtime = `const H = {
  coded(code, message) { const e = new Error(message); e.pwproxyCode = code; return e; },
  ms(v, d) { const n = typeof v === 'number' && isFinite(v) ? v : d; return Math.max(0, Math.min(Math.round(n), 120000)); },
  isTimeout(e) { return !!e && (e.name === 'TimeoutError' || /Timeout \d+ms exceeded/.test(String(e.message))); },
  text(e) { return String((e && e.message) || e).replace(/\u001b\[[0-9;]*m/g, ''); },
  reason(e) {
    const lines = H.text(e).split('\n');
    const hit = lines.filter(l => /element is not|intercepts pointer events|not visible|not enabled|not editable|not stable|outside of the viewport|not attached|detached/i.test(l)).pop();
    return (hit || lines[0]).trim();
  },
  async find(page, selector, timeout) {
    const loc = page.locator(selector);
    if (timeout > 0) {
      try { await loc.first().waitFor({ state: 'attached', timeout }); }
      catch (e) {
        if (H.isTimeout(e)) throw H.coded('ELEMENT_NOT_FOUND', 'no element matches the selector ' + JSON.stringify(selector) + ' (waited ' + timeout + ' ms)');
        throw e;
      }
    }
    const count = await loc.count();
    if (count === 0) throw H.coded('ELEMENT_NOT_FOUND', 'no element matches the selector ' + JSON.stringify(selector));
    return { loc, el: loc.first(), count };
  },
  async act(selector, fn) {
    try { return await fn(); }
    catch (e) {
      if (H.isTimeout(e)) throw H.coded('ELEMENT_NOT_INTERACTIVE', 'the element matching ' + JSON.stringify(selector) + ' could not be used: ' + H.reason(e));
      throw e;
    }
  },
  async where(page) { return { url: page.url(), title: await page.title() }; },
  fail(e) {
    const full = H.text(e);
    const first = full.split(/\n\s*Call log:/)[0].replace(/\s+/g, ' ').trim().slice(0, 2000);
    if (e && e.pwproxyCode) return { code: e.pwproxyCode, message: first };
    return { code: H.classify(full, e && e.name), message: first };
  },
  classify(text, name) {
    if (/net::ERR_|NS_ERROR_|SSL_ERROR|Cannot navigate to invalid URL|Navigation to .* is interrupted|Navigation failed|invalid URL/i.test(text)) return 'NAVIGATION_FAILED';
    if (/is not a valid selector|Unexpected token|Failed to parse|Unknown engine|Invalid selector|not a valid XPath|Unexpected end of|Unsupported token|Expected .* selector|Malformed selector|Unterminated/i.test(text)) return 'INVALID_SELECTOR';
    if (name === 'TimeoutError' || /Timeout \d+ms exceeded/.test(text)) return 'TIMEOUT';
    return 'BROWSER_ERROR';
  },
};
`

// Build encodes params (already validated against t.InputSchema) into the
// program that runs t. Only the base64 alphabet of the blob varies between
// calls: the code is the same for every argument.
func (t *Own) Build(params json.RawMessage) (Program, error) {
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	if !json.Valid(params) {
		return Program{}, fmt.Errorf("%s: arguments are not JSON", t.Name)
	}
	blob := base64.StdEncoding.EncodeToString(params)
	var b strings.Builder
	b.WriteString("async (page) => {\n")
	b.WriteString("const args = JSON.parse(Buffer.from('")
	b.WriteString(blob)
	b.WriteString("', 'base64').toString('utf8'));\n")
	b.WriteString(runtime)
	b.WriteString("const run = async (page, args) => {\n")
	b.WriteString(t.body)
	b.WriteString("\n};\ntry { return { pwproxy: 1, ok: true, value: await run(page, args) }; }\n")
	b.WriteString("catch (e) { return { pwproxy: 1, ok: false, error: H.fail(e) }; }\n}")
	args, err := json.Marshal(map[string]string{"code": b.String()})
	if err != nil {
		return Program{}, fmt.Errorf("%s: %w", t.Name, err)
	}
	return Program{Args: args, Blob: blob}, nil
}

// Outcome is what a program answered.
type Outcome struct {
	// Value is the tool's answer (JSON), when it succeeded.
	Value json.RawMessage
	// Image is a picture the tool took (screenshot_element), taken out of
	// Value so that it is stored as an image rather than as base64 text.
	Image *Image
	// Err is the failure, with a documented code, when it failed.
	Err *proxy.Error
}

// Image is one picture a tool returned.
type Image struct {
	MimeType string
	Data     []byte
}

type envelope struct {
	Pwproxy int             `json:"pwproxy"`
	OK      bool            `json:"ok"`
	Value   json.RawMessage `json:"value"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Interpret reads a program's answer: resultText is the text of upstream's
// "### Result" section; errorText that of "### Error" when upstream itself
// reported a failure (the program could not run, or the page broke it).
func Interpret(resultText, errorText string) Outcome {
	if errorText != "" {
		return Outcome{Err: ToolError(Classify(errorText), errorText)}
	}
	var env envelope
	if err := json.Unmarshal([]byte(strings.TrimSpace(resultText)), &env); err != nil || env.Pwproxy != 1 {
		return Outcome{Err: ToolError(proxy.EBROWSER, "the tool's program gave no answer the proxy understands: "+clip(resultText, 300))}
	}
	if !env.OK {
		if env.Error == nil {
			return Outcome{Err: ToolError(proxy.EBROWSER, "the tool failed without a message")}
		}
		return Outcome{Err: ToolError(env.Error.Code, env.Error.Message)}
	}
	out := Outcome{Value: env.Value}
	if len(out.Value) == 0 {
		out.Value = json.RawMessage(`null`)
	}
	out.Image, out.Value = takeImage(out.Value)
	return out
}

// takeImage moves value.image {mime_type, data} out of value, leaving its
// size in its place.
func takeImage(v json.RawMessage) (*Image, json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil || m["image"] == nil {
		return nil, v
	}
	var im struct {
		MimeType string `json:"mime_type"`
		Data     string `json:"data"`
	}
	if json.Unmarshal(m["image"], &im) != nil || im.Data == "" {
		return nil, v
	}
	data, err := base64.StdEncoding.DecodeString(im.Data)
	if err != nil {
		return nil, v
	}
	m["image"], _ = json.Marshal(map[string]any{"mime_type": im.MimeType, "bytes": len(data)})
	out, err := json.Marshal(m)
	if err != nil {
		return nil, v
	}
	return &Image{MimeType: im.MimeType, Data: data}, out
}

var known = map[string]bool{
	proxy.EELEMENTMISSING: true, proxy.ENOTINTERACTIVE: true, proxy.EINVALIDSELECTOR: true,
	proxy.ENAVIGATION: true, proxy.ETIMEOUT: true, proxy.EBROWSER: true,
	proxy.EPAGEMISSING: true,
}

// ToolError is a failure in the browser with its code, whether a retry can
// help, and what to do.
func ToolError(code, message string) *proxy.Error {
	if !known[code] {
		code = proxy.EBROWSER
	}
	return proxy.Errorf(code, "%s", ansi.ReplaceAllString(message, ""))
}

// ansi matches terminal colour codes Playwright puts in its messages.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

var (
	navFailed   = regexp.MustCompile(`(?i)net::ERR_|NS_ERROR_|SSL_ERROR|Cannot navigate to invalid URL|Navigation to .* is interrupted|Navigation failed`)
	badSelector = regexp.MustCompile(`(?i)is not a valid selector|Failed to parse selector|Unknown engine|Invalid selector|not a valid XPath|Malformed selector|while parsing (css )?selector`)
	noElement   = regexp.MustCompile(`(?i)Ref \S+ not found|not found in the current page snapshot|No element matching|element\(s\) not found|resolved to 0 elements|does not match any elements`)
	timedOut    = regexp.MustCompile(`Timeout \d+ms exceeded|TimeoutError`)
	notUsable   = regexp.MustCompile(`(?i)element is not (visible|enabled|editable|stable|attached)|intercepts pointer events`)
	// reservedPage is the session manager's own refusal of a page left on
	// one of the proxy's addresses; upstream's messages never start so.
	reservedPage = regexp.MustCompile(`^` + proxy.EDOMAINBLOCKED + `: `)
)

// Classify maps the error text of any upstream tool to a documented code,
// so upstream's own tools fail with the same taxonomy as ours.
func Classify(text string) string {
	switch {
	case reservedPage.MatchString(text):
		return proxy.EDOMAINBLOCKED
	case navFailed.MatchString(text):
		return proxy.ENAVIGATION
	case badSelector.MatchString(text):
		return proxy.EINVALIDSELECTOR
	case noElement.MatchString(text):
		return proxy.EELEMENTMISSING
	case notUsable.MatchString(text):
		return proxy.ENOTINTERACTIVE
	case timedOut.MatchString(text):
		return proxy.ETIMEOUT
	}
	return proxy.EBROWSER
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
