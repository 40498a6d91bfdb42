package toolset_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Acceptance 6: selectors and text with quotes, backticks and ${…} are data.
// Each hostile string would, if pasted into the program, change the page
// title (in the page, or through page in the worker): the title must stay.
func TestArgumentsAreDataNeverCode(t *testing.T) {
	pages := site(t)
	s := startServer(t, quick)
	id := s.createSession(t)
	s.ok(t, id, "navigate", map[string]any{"url": pages + "/index.html"}, nil)

	hostile := []string{
		`a'); await page.evaluate(() => document.title = 'pwned'); ('`,
		`a"); await page.evaluate(() => document.title = "pwned"); ("`,
		"`); await page.evaluate(() => document.title = `pwned`); (`",
		"${await page.evaluate(() => document.title = 'pwned')}",
		"a` + (await page.evaluate(() => document.title = 'pwned')) + `",
		`\'); await page.evaluate(() => document.title = 'pwned'); //`,
		`')); await page.evaluate(() => document.title = 'pwned'); (('`,
		"a\u2028await page.evaluate(() => document.title = 'pwned')",
		`}}); await page.evaluate(() => document.title = 'pwned'); ({{`,
	}
	tools := []string{"click", "get_text", "element_exists", "find_elements", "fill"}
	for _, h := range hostile {
		for _, tool := range tools {
			params := map[string]any{"selector": h, "timeout": 100}
			switch tool {
			case "fill":
				params["value"] = h
			case "element_exists", "find_elements":
				delete(params, "timeout")
			}
			res := s.call(t, id, tool, params)
			if res.Status == proxy.StatusError && res.ErrorCode != proxy.EINVALIDSELECTOR && res.ErrorCode != proxy.EELEMENTMISSING {
				t.Errorf("%s(%q) failed with %s: %s", tool, h, res.ErrorCode, res.Error)
			}
		}
	}
	// Text is typed exactly as given.
	for _, h := range hostile {
		s.ok(t, id, "fill", map[string]any{"selector": "#name", "value": h}, nil)
		var v struct{ Value string }
		s.ok(t, id, "get_value", map[string]any{"selector": "#name"}, &v)
		if v.Value != h {
			t.Errorf("fill(%q) left %q", h, v.Value)
		}
	}
	s.ok(t, id, "type", map[string]any{"selector": "#name", "text": hostile[2], "clear": true}, nil)
	var v struct{ Value string }
	s.ok(t, id, "get_value", map[string]any{"selector": "#name"}, &v)
	if v.Value != hostile[2] {
		t.Errorf("type left %q, want %q", v.Value, hostile[2])
	}
	// A legitimate selector full of quotes, backticks and ${} finds its element.
	if res := s.call(t, id, "browser_evaluate", map[string]any{"function": "() => { const e = document.createElement('b'); e.setAttribute('data-x', \"it's `${1}` \\\"q\\\"\"); e.textContent = 'quoted'; document.body.prepend(e); }"}); res.Status != proxy.StatusSuccess {
		t.Fatal(res.Error)
	}
	var txt struct{ Text string }
	s.ok(t, id, "get_text", map[string]any{"selector": `[data-x="it's ` + "`${1}`" + ` \"q\""]`}, &txt)
	if txt.Text != "quoted" {
		t.Errorf("quoted attribute selector read %q", txt.Text)
	}

	var meta struct{ Title string }
	s.ok(t, id, "get_page_metadata", map[string]any{}, &meta)
	if meta.Title != "Home" {
		t.Fatalf("page title is %q after the hostile calls: an argument ran as code", meta.Title)
	}

	// The record keeps the arguments once, as the request's params; the
	// program's echo in the response has them scrubbed.
	db := openRO(t, s.DBPath)
	var params, result string
	err := db.QueryRow(`SELECT q.params, r.result FROM requests q JOIN responses r USING (ref_id) WHERE q.tool_name = 'fill' ORDER BY q.timestamp LIMIT 1`).Scan(&params, &result)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil || p["selector"] != hostile[0] {
		t.Errorf("recorded params %s, want the selector %q as data", params, hostile[0])
	}
	if !strings.Contains(result, "(arguments: see the request)") || strings.Contains(result, "Buffer.from('ey") {
		t.Errorf("recorded result still carries the encoded arguments: %.300s", result)
	}
}

// A credential typed through a selector tool reaches the page, and neither
// the answers nor the record ever hold it: the program's encoded arguments
// are scrubbed from the record and the value is masked everywhere else.
func TestCredentialThroughSelectorTools(t *testing.T) {
	pages := site(t)
	s := startServer(t, quick)
	id := s.createSession(t)
	s.ok(t, id, "navigate", map[string]any{"url": pages + "/index.html"}, nil)
	const password = `pa"ss'wo` + "`rd${x}"
	var cred struct{ Placeholder string }
	if code := do(t, "POST", s.URL+"/credentials", map[string]string{"value": password}, &cred); code != 201 || cred.Placeholder == "" {
		t.Fatalf("POST /credentials = %d %+v", code, cred)
	}
	for _, tool := range []string{"fill", "type"} {
		params := map[string]any{"selector": "#name", "value": cred.Placeholder, "text": cred.Placeholder, "clear": true}
		if tool == "fill" {
			delete(params, "text")
			delete(params, "clear")
		} else {
			delete(params, "value")
		}
		s.ok(t, id, tool, params, nil)
		var v struct{ Value string }
		res := s.ok(t, id, "get_value", map[string]any{"selector": "#name"}, &v)
		if v.Value != cred.Placeholder || strings.Contains(string(res.Value), "wo`rd") {
			t.Errorf("after %s, get_value answered %s; want the placeholder", tool, res.Value)
		}
		// The page reports the character codes it holds: a check that puts
		// neither the password nor an encoding of it into the record.
		s.call(t, id, "browser_evaluate", map[string]any{"function": "() => { document.title = [...document.querySelector('#name').value].map(c => c.charCodeAt(0)).join(','); }"})
		var meta struct{ Title string }
		s.ok(t, id, "get_page_metadata", map[string]any{}, &meta)
		var codes []string
		for _, r := range password {
			codes = append(codes, fmt.Sprint(r))
		}
		if meta.Title != strings.Join(codes, ",") {
			t.Errorf("after %s the field does not hold the password", tool)
		}
	}
	db := openRO(t, s.DBPath)
	for _, q := range []string{
		`SELECT COUNT(*) FROM requests WHERE instr(params, ?) > 0`,
		`SELECT COUNT(*) FROM responses WHERE instr(result, ?) > 0 OR instr(COALESCE(page_snapshot, ''), ?) > 0 OR instr(COALESCE(error_message, ''), ?) > 0`,
	} {
		var n int
		args := []any{password}
		if strings.Count(q, "?") == 3 {
			args = []any{password, password, password}
		}
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows hold the password: %s", n, q)
		}
	}
	var leaked int
	if err := db.QueryRow(`SELECT COUNT(*) FROM responses WHERE instr(result, ?) > 0`, base64.StdEncoding.EncodeToString([]byte(password))[:12]).Scan(&leaked); err != nil {
		t.Fatal(err)
	}
	if leaked != 0 {
		t.Errorf("%d responses hold the base64 of the password", leaked)
	}
}
