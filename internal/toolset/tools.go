package toolset

import (
	"encoding/json"
	"fmt"
)

// Schema fragments shared by the tools.
var (
	selectorProp = prop{"type": "string", "minLength": 1, "maxLength": 4000,
		"description": "CSS selector, or XPath starting with // (xpath=…, text=… and role=… work too). When several elements match, the first is used."}
	timeoutProp = prop{"type": "integer", "minimum": 0, "maximum": 120000,
		"description": "Milliseconds to wait for the element to appear (default 5000; 0 = do not wait)."}
	navTimeoutProp = prop{"type": "integer", "minimum": 1, "maximum": 120000,
		"description": "Milliseconds to wait for the navigation (default 30000)."}
	waitUntilProp = prop{"type": "string", "enum": []string{"load", "domcontentloaded", "networkidle", "commit"},
		"description": "When the navigation counts as done (default load)."}
)

type prop map[string]any

func schema(props map[string]prop, required ...string) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if props == nil {
		s["properties"] = map[string]prop{}
	}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("toolset: static schema does not marshal: %v", err))
	}
	return b
}

// withAnyOf requires one of the alternatives. The proxy validates calls
// against it; the tool list carries the rule in the description instead,
// since model APIs refuse anyOf at the top of a tool's schema.
func withAnyOf(raw json.RawMessage, alternatives ...[]string) json.RawMessage {
	var s map[string]any
	_ = json.Unmarshal(raw, &s)
	var alts []map[string]any
	for _, req := range alternatives {
		alts = append(alts, map[string]any{"required": req})
	}
	s["anyOf"] = alts
	b, _ := json.Marshal(s)
	return b
}

// Bodies use these: the element wait (t) and the bound on the action
// itself (at), which must never be 0 — Playwright reads 0 as "no timeout".
const (
	elementTimeouts = "const t = H.ms(args.timeout, 5000); const at = Math.max(t, 1000);\n"
	findFirst       = elementTimeouts + "const f = await H.find(page, args.selector, t);\n"
)

// catalogue builds every tool. Descriptions are what the model reads to
// choose a tool: they say what comes back.
func catalogue() []*Own {
	str := func(desc string) prop { return prop{"type": "string", "description": desc} }
	strs := func(desc string) prop {
		return prop{"type": "array", "items": prop{"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 100, "description": desc}
	}
	intp := func(desc string, min, max int) prop {
		return prop{"type": "integer", "minimum": min, "maximum": max, "description": desc}
	}
	sel := func(extra map[string]prop) map[string]prop {
		m := map[string]prop{"selector": selectorProp, "timeout": timeoutProp}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	nav := func() map[string]prop {
		return map[string]prop{"waitUntil": waitUntilProp, "timeout": navTimeoutProp}
	}
	return []*Own{
		// navigation
		{Name: "navigate", Group: GroupNavigation,
			Description: "Open a URL in this session's current tab. Returns {url, title, status, ok}: the final URL after redirects, the page title and the HTTP status of the main document.",
			InputSchema: schema(map[string]prop{"url": str("Absolute http(s) URL."), "waitUntil": waitUntilProp, "timeout": navTimeoutProp}, "url"),
			body: `const resp = await page.goto(args.url, { waitUntil: args.waitUntil || 'load', timeout: H.ms(args.timeout, 30000) });
const w = await H.where(page);
return { url: w.url, title: w.title, status: resp ? resp.status() : null, ok: resp ? resp.ok() : null };`},
		{Name: "go_back", Group: GroupNavigation,
			Description: "Go back in this tab's history. Returns {moved, url, title, status}; moved=false when there was nothing to go back to.",
			InputSchema: schema(nav()),
			body:        historyBody("goBack")},
		{Name: "go_forward", Group: GroupNavigation,
			Description: "Go forward in this tab's history. Returns {moved, url, title, status}.",
			InputSchema: schema(nav()),
			body:        historyBody("goForward")},
		{Name: "reload", Group: GroupNavigation,
			Description: "Reload the current page. Returns {url, title, status}.",
			InputSchema: schema(nav()),
			body: `const resp = await page.reload({ waitUntil: args.waitUntil || 'load', timeout: H.ms(args.timeout, 30000) });
const w = await H.where(page);
return { url: w.url, title: w.title, status: resp ? resp.status() : null };`},
		{Name: "wait_for_load", Group: GroupNavigation, ReadOnly: true,
			Description: "Wait until the current page reaches a load state (load, domcontentloaded or networkidle). Returns {state, url, title}.",
			InputSchema: schema(map[string]prop{"state": {"type": "string", "enum": []string{"load", "domcontentloaded", "networkidle"}, "description": "Load state to wait for (default load)."}, "timeout": navTimeoutProp}),
			body: `const state = args.state || 'load';
await page.waitForLoadState(state, { timeout: H.ms(args.timeout, 30000) });
const w = await H.where(page);
return { state, url: w.url, title: w.title };`},

		// interaction
		{Name: "click", Group: GroupInteraction,
			Description: "Click the element matching a CSS or XPath selector. Returns {success, matches, url, title}.",
			InputSchema: schema(sel(map[string]prop{
				"button":      {"type": "string", "enum": []string{"left", "right", "middle"}, "description": "Mouse button (default left)."},
				"click_count": intp("2 for a double click (default 1).", 1, 3),
			}), "selector"),
			body: findFirst + `await H.act(args.selector, () => f.el.click({ button: args.button || 'left', clickCount: args.click_count || 1, timeout: at }));
const w = await H.where(page);
return { success: true, matches: f.count, url: w.url, title: w.title };`},
		{Name: "type", Group: GroupInteraction,
			Description: "Type text into the element matching a selector, key by key (fires key events; use fill to set a value at once). clear=true empties it first. Returns {success, matches}.",
			InputSchema: schema(sel(map[string]prop{
				"text":  {"type": "string", "maxLength": 100000, "description": "Text to type."},
				"delay": intp("Milliseconds between key presses (default 0).", 0, 1000),
				"clear": {"type": "boolean", "description": "Empty the field before typing (default false)."},
			}), "selector", "text"),
			body: findFirst + `await H.act(args.selector, async () => {
  if (args.clear) await f.el.fill('', { timeout: at });
  await f.el.focus({ timeout: at });
  // Typing goes after what the field holds, not wherever focus put the caret.
  await f.el.evaluate(e => { try { if (typeof e.value === 'string' && e.setSelectionRange) e.setSelectionRange(e.value.length, e.value.length); } catch (_) {} });
  await page.keyboard.type(args.text, { delay: args.delay || 0 });
});
return { success: true, matches: f.count };`},
		{Name: "fill", Group: GroupInteraction,
			Description: "Set the value of the input, textarea or contenteditable matching a selector (replaces what was there). Returns {success, matches}.",
			InputSchema: schema(sel(map[string]prop{"value": {"type": "string", "maxLength": 100000, "description": "The value."}}), "selector", "value"),
			body: findFirst + `await H.act(args.selector, () => f.el.fill(args.value, { timeout: at }));
return { success: true, matches: f.count };`},
		{Name: "select", Group: GroupInteraction,
			Description: "Select options of the <select> matching a selector, by value or label. Returns {success, selected} (the values now selected).",
			InputSchema: schema(sel(map[string]prop{"values": strs("Option values or labels to select.")}), "selector", "values"),
			body: findFirst + `const selected = await H.act(args.selector, () => f.el.selectOption(args.values, { timeout: at }));
return { success: true, matches: f.count, selected };`},
		{Name: "check", Group: GroupInteraction,
			Description: "Check the checkbox or radio button matching a selector. Returns {success, checked}.",
			InputSchema: schema(sel(nil), "selector"),
			body: findFirst + `await H.act(args.selector, () => f.el.check({ timeout: at }));
return { success: true, matches: f.count, checked: await f.el.isChecked() };`},
		{Name: "uncheck", Group: GroupInteraction,
			Description: "Uncheck the checkbox matching a selector. Returns {success, checked}.",
			InputSchema: schema(sel(nil), "selector"),
			body: findFirst + `await H.act(args.selector, () => f.el.uncheck({ timeout: at }));
return { success: true, matches: f.count, checked: await f.el.isChecked() };`},
		{Name: "hover", Group: GroupInteraction,
			Description: "Move the mouse over the element matching a selector. Returns {success, matches}.",
			InputSchema: schema(sel(nil), "selector"),
			body: findFirst + `await H.act(args.selector, () => f.el.hover({ timeout: at }));
return { success: true, matches: f.count };`},
		{Name: "scroll", Group: GroupInteraction,
			Description: "Scroll the element matching selector into view, or without a selector scroll the page by x/y pixels (default 500 down). Returns {success, scroll_x, scroll_y, page_height}.",
			InputSchema: schema(map[string]prop{"selector": selectorProp, "timeout": timeoutProp,
				"x": intp("Pixels to scroll right (negative: left).", -100000, 100000),
				"y": intp("Pixels to scroll down (negative: up; default 500).", -100000, 100000)}),
			body: `if (args.selector) {
  ` + findFirst + `  await H.act(args.selector, () => f.el.scrollIntoViewIfNeeded({ timeout: at }));
} else {
  await page.evaluate(d => window.scrollBy(d[0], d[1]), [args.x || 0, args.y === undefined ? 500 : args.y]);
}
const pos = await page.evaluate(() => [window.scrollX, window.scrollY, document.documentElement.scrollHeight]);
return { success: true, scroll_x: pos[0], scroll_y: pos[1], page_height: pos[2] };`},
		{Name: "drag_and_drop", Group: GroupInteraction,
			Description: "Drag the element matching source onto the element matching target. Returns {success}.",
			InputSchema: schema(map[string]prop{"source": selectorProp, "target": selectorProp, "timeout": timeoutProp}, "source", "target"),
			body: elementTimeouts + `const s = await H.find(page, args.source, t);
const d = await H.find(page, args.target, t);
await H.act(args.source, () => s.el.dragTo(d.el, { timeout: at }));
return { success: true };`},
		{Name: "upload_file", Group: GroupInteraction,
			Description: "Set the files of the <input type=file> matching a selector, from the session's own files (its downloads and saved files, in its output directory). Returns {success, files}.",
			InputSchema: schema(sel(map[string]prop{"paths": strs("Absolute paths of the files to upload, within the session's output directory.")}), "selector", "paths"),
			body: findFirst + `await H.act(args.selector, () => f.el.setInputFiles(args.paths, { timeout: at }));
return { success: true, files: args.paths.length };`},
		{Name: "press", Group: GroupInteraction,
			Description: "Press a key or chord (Enter, Tab, Escape, ArrowDown, Control+A…) on the element matching selector, or on the page when no selector is given. Returns {success}.",
			InputSchema: schema(map[string]prop{"key": {"type": "string", "minLength": 1, "maxLength": 100, "description": "Key name as Playwright spells it."}, "selector": selectorProp, "timeout": timeoutProp}, "key"),
			body: `if (args.selector) {
  ` + findFirst + `  await H.act(args.selector, () => f.el.press(args.key, { timeout: at }));
} else {
  await page.keyboard.press(args.key);
}
return { success: true };`},

		// extraction
		{Name: "get_text", Group: GroupExtraction, ReadOnly: true,
			Description: "The visible text of the element matching a selector. Returns {text, matches, truncated}.",
			InputSchema: schema(sel(map[string]prop{"max_length": intp("Longest text returned (default 20000).", 1, 1000000)}), "selector"),
			body: findFirst + `const max = args.max_length || 20000;
const text = await H.act(args.selector, () => f.el.innerText({ timeout: at }));
return { text: text.slice(0, max), matches: f.count, truncated: text.length > max };`},
		{Name: "get_all_text", Group: GroupExtraction, ReadOnly: true,
			Description: "The visible text of every element matching selector (default: the whole page body), in document order. Returns {texts, count, truncated}.",
			InputSchema: schema(map[string]prop{"selector": selectorProp,
				"limit":      intp("Most elements returned (default 100).", 1, 10000),
				"max_length": intp("Most characters returned in all (default 20000).", 1, 1000000)}),
			body: `const loc = page.locator(args.selector || 'body');
const limit = args.limit || 100, max = args.max_length || 20000;
const count = await loc.count();
const all = await loc.evaluateAll((els, n) => els.slice(0, n).map(e => (e.innerText !== undefined ? e.innerText : e.textContent) || ''), limit);
let used = 0, truncated = count > limit;
const texts = [];
for (const s of all) {
  const room = max - used;
  if (room <= 0) { truncated = true; break; }
  if (s.length > room) truncated = true;
  texts.push(s.slice(0, room));
  used += Math.min(s.length, room);
}
return { texts, count, truncated };`},
		{Name: "get_attribute", Group: GroupExtraction, ReadOnly: true,
			Description: "An attribute of the element matching a selector. Returns {value, matches}; value is null when the attribute is absent.",
			InputSchema: schema(sel(map[string]prop{"name": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Attribute name, e.g. href."}}), "selector", "name"),
			body:        findFirst + `return { value: await H.act(args.selector, () => f.el.getAttribute(args.name, { timeout: at })), matches: f.count };`},
		{Name: "get_value", Group: GroupExtraction, ReadOnly: true,
			Description: "The current value of the input, textarea or select matching a selector. Returns {value, matches}.",
			InputSchema: schema(sel(nil), "selector"),
			body:        findFirst + `return { value: await H.act(args.selector, () => f.el.inputValue({ timeout: at })), matches: f.count };`},
		{Name: "extract_table", Group: GroupExtraction, ReadOnly: true,
			Description: "Rows of the <table> matching selector (default: the first table) as JSON objects keyed by the header cells (thead, or a first row of th; column_N where there is none). Returns {headers, rows, total_rows, truncated}.",
			InputSchema: schema(map[string]prop{"selector": selectorProp, "timeout": timeoutProp, "limit": intp("Most rows returned (default 200).", 1, 100000)}),
			body: elementTimeouts + `const f = await H.find(page, args.selector || 'table', t);
const found = await f.el.evaluate((el, limit) => {
  const table = el.tagName === 'TABLE' ? el : el.querySelector('table');
  if (!table) return null;
  const clean = s => (s || '').replace(/\s+/g, ' ').trim();
  const rows = Array.from(table.rows);
  let headerCells = [], body = rows;
  const thead = table.tHead;
  if (thead && thead.rows.length) {
    headerCells = Array.from(thead.rows[thead.rows.length - 1].cells);
    body = rows.filter(r => r.parentElement !== thead);
  } else if (rows.length && rows[0].cells.length && Array.from(rows[0].cells).every(c => c.tagName === 'TH')) {
    headerCells = Array.from(rows[0].cells);
    body = rows.slice(1);
  }
  const seen = {};
  const headers = headerCells.map((c, i) => {
    let h = clean(c.innerText) || ('column_' + (i + 1));
    if (seen[h]) { seen[h]++; h = h + '_' + seen[h]; } else { seen[h] = 1; }
    return h;
  });
  const width = body.reduce((w, r) => Math.max(w, r.cells.length), headers.length);
  for (let i = headers.length; i < width; i++) headers.push('column_' + (i + 1));
  const out = body.slice(0, limit).map(r => {
    const o = {};
    Array.from(r.cells).forEach((c, i) => { o[headers[i]] = clean(c.innerText); });
    return o;
  });
  return { headers, rows: out, total_rows: body.length, truncated: body.length > limit };
}, args.limit || 200);
if (!found) throw H.coded('ELEMENT_NOT_FOUND', 'the element matching ' + JSON.stringify(args.selector || 'table') + ' is not a table and holds none');
return found;`},
		{Name: "extract_links", Group: GroupExtraction, ReadOnly: true,
			Description: "Links (a[href]) inside the element matching selector (default: the whole page), with absolute URLs. filter keeps those whose text or URL contains it (case-insensitive). Returns {links: [{text, href}], total, truncated}.",
			InputSchema: schema(map[string]prop{"selector": selectorProp, "timeout": timeoutProp,
				"filter": str("Keep only links whose text or URL contains this."),
				"limit":  intp("Most links returned (default 100).", 1, 10000)}),
			body: elementTimeouts + `const f = await H.find(page, args.selector || 'body', t);
return await f.el.evaluate((root, o) => {
  const list = Array.from(root.querySelectorAll('a[href]'));
  if (root.matches && root.matches('a[href]')) list.unshift(root);
  const needle = o.filter.toLowerCase();
  const all = list
    .map(a => ({ text: (a.innerText || a.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 200), href: a.href }))
    .filter(l => !needle || l.text.toLowerCase().includes(needle) || l.href.toLowerCase().includes(needle));
  return { links: all.slice(0, o.limit), total: all.length, truncated: all.length > o.limit };
}, { filter: args.filter || '', limit: args.limit || 100 });`},
		{Name: "get_page_metadata", Group: GroupExtraction, ReadOnly: true,
			Description: "The current page's metadata: {url, title, description, canonical, lang, meta, open_graph, h1, links, images, forms}.",
			InputSchema: schema(nil),
			body: `const m = await page.evaluate(() => {
  const pick = (s, a) => { const e = document.querySelector(s); return e ? e.getAttribute(a) : null; };
  const meta = {}, og = {};
  let n = 0;
  for (const e of document.querySelectorAll('meta[name], meta[property]')) {
    if (++n > 100) break;
    const k = e.getAttribute('name') || e.getAttribute('property');
    const v = (e.getAttribute('content') || '').slice(0, 500);
    if (/^(og|twitter):/i.test(k)) og[k] = v; else meta[k] = v;
  }
  return {
    description: pick('meta[name="description"]', 'content'),
    canonical: pick('link[rel="canonical"]', 'href'),
    lang: document.documentElement.lang || null,
    meta, open_graph: og,
    h1: Array.from(document.querySelectorAll('h1')).slice(0, 5).map(h => h.innerText.trim().slice(0, 200)),
    links: document.links.length, images: document.images.length, forms: document.forms.length,
  };
});
const w = await H.where(page);
return Object.assign({ url: w.url, title: w.title }, m);`},
		{Name: "screenshot_element", Group: GroupExtraction, ReadOnly: true,
			Description: "A screenshot of just the element matching a selector. The image is stored with the call: read it with get_content(ref_id). Returns {success, image: {mime_type, bytes}}.",
			InputSchema: schema(sel(map[string]prop{
				"type":    {"type": "string", "enum": []string{"png", "jpeg"}, "description": "Image format (default png)."},
				"quality": intp("JPEG quality 1-100 (default 80).", 1, 100),
			}), "selector"),
			body: findFirst + `const type = args.type || 'png';
const opts = { type, timeout: at };
if (type === 'jpeg') opts.quality = args.quality || 80;
const buf = await H.act(args.selector, () => f.el.screenshot(opts));
return { success: true, matches: f.count, image: { mime_type: 'image/' + type, data: buf.toString('base64') } };`},

		// state
		{Name: "get_cookies", Group: GroupState, ReadOnly: true,
			Description: "This session's cookies, optionally only those sent to the given URLs. Returns {cookies, count}.",
			InputSchema: schema(map[string]prop{"urls": strs("Only cookies for these URLs.")}),
			body: `const cookies = await page.context().cookies(args.urls && args.urls.length ? args.urls : undefined);
return { cookies, count: cookies.length };`},
		{Name: "set_cookies", Group: GroupState,
			Description: "Add cookies to this session. Each needs name, value and either url or domain+path. Returns {success, count}.",
			InputSchema: schema(map[string]prop{"cookies": {"type": "array", "minItems": 1, "maxItems": 500, "items": prop{
				"type": "object", "required": []string{"name", "value"},
				"properties": map[string]prop{
					"name": {"type": "string", "minLength": 1}, "value": {"type": "string"},
					"url": {"type": "string"}, "domain": {"type": "string"}, "path": {"type": "string"},
					"expires":  {"type": "number", "description": "Unix time in seconds; -1 for a session cookie."},
					"httpOnly": {"type": "boolean"}, "secure": {"type": "boolean"},
					"sameSite": {"type": "string", "enum": []string{"Strict", "Lax", "None"}},
				},
				"additionalProperties": false,
			}}}, "cookies"),
			body: `await page.context().addCookies(args.cookies);
return { success: true, count: args.cookies.length };`},
		{Name: "save_state", Group: GroupState, ReadOnly: true,
			Description: "This session's storage state (Playwright storage-state JSON: cookies and localStorage per origin). Returns {state, cookies, origins}; restore it in any session with restore_state(ref_id) of this call, or restore_state(state).",
			InputSchema: schema(nil),
			body: `const state = await page.context().storageState();
return { state, cookies: state.cookies.length, origins: state.origins.length };`},
		{Name: "restore_state", Group: GroupState,
			Description: "Replace this session's cookies and localStorage with a saved storage state: pass state (Playwright storage-state JSON) or ref_id of a save_state call, from any session. The current page is reloaded so it sees the state. Returns {success, cookies, origins}.",
			InputSchema: withAnyOf(schema(map[string]prop{
				"state":  {"type": "object", "description": "Playwright storage-state JSON: {cookies: [...], origins: [{origin, localStorage: [{name, value}]}]}."},
				"ref_id": str("ref_id of a save_state call."),
				"reload": {"type": "boolean", "description": "Reload the current page afterwards (default true)."},
			}), []string{"state"}, []string{"ref_id"}),
			body: `if (!args.state || typeof args.state !== 'object') throw H.coded('BROWSER_ERROR', 'state must be a storage-state object');
await page.context().setStorageState(args.state);
const url = page.url();
if (args.reload !== false && url && !url.startsWith('about:')) await page.reload({ waitUntil: 'load', timeout: 30000 });
return { success: true, cookies: (args.state.cookies || []).length, origins: (args.state.origins || []).length };`},

		// network
		{Name: "block_resource", Group: GroupNetwork,
			Description: "Block requests of this session from now on: by resource type (image, stylesheet, font, media, script, xhr, fetch…) and/or by URL glob (e.g. **/*.png, https://ads.example.com/**). Rules last until the session's worker is replaced (restored=true). Returns {success}.",
			InputSchema: withAnyOf(schema(map[string]prop{
				"resource_types": {"type": "array", "minItems": 1, "items": prop{"type": "string", "enum": []string{"document", "stylesheet", "image", "media", "font", "script", "texttrack", "xhr", "fetch", "eventsource", "websocket", "manifest", "other"}}, "description": "Resource types to block."},
				"url_patterns":   strs("URL globs to block (** matches anything, * anything but /)."),
			}), []string{"resource_types"}, []string{"url_patterns"}),
			body: `const ctx = page.context();
const types = args.resource_types || [], patterns = args.url_patterns || [];
if (types.length) await ctx.route('**/*', route => types.includes(route.request().resourceType()) ? route.abort('blockedbyclient') : route.fallback());
for (const p of patterns) await ctx.route(p, route => route.abort('blockedbyclient'));
return { success: true, resource_types: types, url_patterns: patterns };`},
		{Name: "mock_response", Group: GroupNetwork,
			Description: "Answer this session's requests matching a URL glob (optionally only one method) with a fixed response instead of the network, from now on. Returns {success}.",
			InputSchema: schema(map[string]prop{
				"url_pattern":  {"type": "string", "minLength": 1, "description": "URL glob, e.g. **/api/items*."},
				"method":       {"type": "string", "description": "Only this HTTP method (default: any)."},
				"status":       intp("HTTP status (default 200).", 100, 599),
				"body":         {"type": []string{"string", "object", "array"}, "description": "Response body; objects and arrays are sent as JSON."},
				"content_type": str("Content-Type (default application/json)."),
				"headers":      {"type": "object", "additionalProperties": prop{"type": "string"}, "description": "Extra response headers."},
			}, "url_pattern"),
			body: `const method = (args.method || '').toUpperCase();
const body = typeof args.body === 'string' ? args.body : (args.body === undefined ? '' : JSON.stringify(args.body));
await page.context().route(args.url_pattern, route => {
  if (method && route.request().method() !== method) return route.fallback();
  return route.fulfill({ status: args.status || 200, headers: args.headers || {}, contentType: args.content_type || 'application/json', body });
});
return { success: true, url_pattern: args.url_pattern };`},
		{Name: "set_offline", Group: GroupNetwork,
			Description: "Take this session offline (every request fails, the browser's HTTP cache included) or back online. Returns {success, offline}.",
			InputSchema: schema(map[string]prop{"offline": {"type": "boolean", "description": "true: offline; false: online."}}, "offline"),
			body: `const ctx = page.context();
await ctx.setOffline(args.offline);
ctx.__pwproxyOffline = args.offline;
// Chromium serves cached pages while offline. Playwright turns the HTTP
// cache off while any route is set, so a route that changes nothing is
// kept while offline and removed when back online.
if (args.offline && !ctx.__pwproxyOfflineRoute) {
  ctx.__pwproxyOfflineRoute = route => route.fallback();
  await ctx.route('**/*', ctx.__pwproxyOfflineRoute);
} else if (!args.offline && ctx.__pwproxyOfflineRoute) {
  await ctx.unroute('**/*', ctx.__pwproxyOfflineRoute);
  ctx.__pwproxyOfflineRoute = undefined;
}
const net = ctx.__pwproxyNet;
if (net) {
  // set_throttling's own emulation would otherwise override this.
  net.conditions.offline = args.offline;
  await net.session.send('Network.emulateNetworkConditions', net.conditions);
}
return { success: true, offline: args.offline };`},
		{Name: "set_throttling", Group: GroupNetwork,
			Description: "Emulate a slow network in the current tab: added latency and bandwidth limits; disable=true restores full speed. Returns {success}.",
			InputSchema: schema(map[string]prop{
				"latency_ms":    intp("Added round-trip latency in ms.", 0, 60000),
				"download_kbps": intp("Download bandwidth in kbit/s (0: unlimited).", 0, 10000000),
				"upload_kbps":   intp("Upload bandwidth in kbit/s (0: unlimited).", 0, 10000000),
				"disable":       {"type": "boolean", "description": "Remove throttling."},
			}),
			body: `const ctx = page.context();
const rate = v => (typeof v === 'number' && v > 0) ? v * 1024 / 8 : -1;
let net = ctx.__pwproxyNet;
if (args.disable === true) {
  if (net) {
    ctx.__pwproxyNet = undefined;
    await net.session.send('Network.emulateNetworkConditions', { offline: !!ctx.__pwproxyOffline, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await net.session.detach().catch(() => {});
  }
  return { success: true, latency_ms: 0, download_kbps: 0, upload_kbps: 0 };
}
if (!net) {
  // Kept open: emulation ends when its CDP session detaches.
  net = { session: await ctx.newCDPSession(page) };
  await net.session.send('Network.enable');
  ctx.__pwproxyNet = net;
}
net.conditions = { offline: !!ctx.__pwproxyOffline, latency: args.latency_ms || 0, downloadThroughput: rate(args.download_kbps), uploadThroughput: rate(args.upload_kbps) };
await net.session.send('Network.emulateNetworkConditions', net.conditions);
return { success: true, latency_ms: args.latency_ms || 0, download_kbps: args.download_kbps || 0, upload_kbps: args.upload_kbps || 0 };`},
		{Name: "get_request_log", Group: GroupNetwork, ReadOnly: true,
			Description: "The current page's recent network requests, newest last: {requests: [{url, method, resource_type, status, failure}], total, truncated}. filter keeps URLs containing it.",
			InputSchema: schema(map[string]prop{
				"filter":        str("Keep only URLs containing this (case-insensitive)."),
				"resource_type": str("Keep only this resource type (document, image, fetch…)."),
				"limit":         intp("Most requests returned, the newest (default 50).", 1, 1000),
			}),
			body: `const needle = (args.filter || '').toLowerCase();
const kept = (await page.requests()).filter(r => (!needle || r.url().toLowerCase().includes(needle)) && (!args.resource_type || r.resourceType() === args.resource_type));
const limit = args.limit || 50;
const requests = [];
for (const r of kept.slice(-limit)) {
  const failure = r.failure();
  const resp = failure ? null : await Promise.race([r.response().catch(() => null), new Promise(res => setTimeout(() => res(null), 250))]);
  requests.push({ url: r.url(), method: r.method(), resource_type: r.resourceType(), status: resp ? resp.status() : null, failure: failure ? failure.errorText : null });
}
return { requests, total: kept.length, truncated: kept.length > limit };`},

		// elements
		{Name: "find_element", Group: GroupElements, ReadOnly: true,
			Description: "Describe the first element matching a selector: {matches, tag, text, attributes, visible, enabled, box}. ELEMENT_NOT_FOUND when nothing matches within timeout.",
			InputSchema: schema(sel(nil), "selector"),
			body:        findFirst + `return Object.assign({ matches: f.count }, await f.el.evaluate(` + describeJS + `));`},
		{Name: "find_elements", Group: GroupElements, ReadOnly: true,
			Description: "Describe every element matching a selector (up to limit): {count, elements: [{tag, text, attributes, visible, enabled, box}], truncated}. An empty list when nothing matches.",
			InputSchema: schema(map[string]prop{"selector": selectorProp, "limit": intp("Most elements described (default 20).", 1, 500)}, "selector"),
			body: `const loc = page.locator(args.selector);
const count = await loc.count();
const limit = args.limit || 20;
const elements = await loc.evaluateAll((els, n) => els.slice(0, n).map(` + describeJS + `), limit);
return { count, elements, truncated: count > limit };`},
		{Name: "element_exists", Group: GroupElements, ReadOnly: true,
			Description: "Whether any element matches a selector, now (no waiting). Returns {exists, count}.",
			InputSchema: schema(map[string]prop{"selector": selectorProp}, "selector"),
			body: `const count = await page.locator(args.selector).count();
return { exists: count > 0, count };`},
		{Name: "is_visible", Group: GroupElements, ReadOnly: true,
			Description: "Whether the first element matching a selector is visible, now. Returns {visible, count}; visible=false when nothing matches.",
			InputSchema: schema(map[string]prop{"selector": selectorProp}, "selector"),
			body: `const loc = page.locator(args.selector);
const count = await loc.count();
return { visible: count > 0 && await loc.first().isVisible(), count };`},
		{Name: "is_enabled", Group: GroupElements, ReadOnly: true,
			Description: "Whether the first element matching a selector is enabled. Returns {enabled, count}; ELEMENT_NOT_FOUND when nothing matches within timeout.",
			InputSchema: schema(sel(nil), "selector"),
			body:        findFirst + `return { enabled: await H.act(args.selector, () => f.el.isEnabled({ timeout: at })), count: f.count };`},
		{Name: "wait_for_selector", Group: GroupElements, ReadOnly: true,
			Description: "Wait until an element matching a selector is attached, detached, visible or hidden (default visible). Returns {success, state, count}; TIMEOUT when it does not happen in time.",
			InputSchema: schema(map[string]prop{"selector": selectorProp,
				"state":   {"type": "string", "enum": []string{"attached", "detached", "visible", "hidden"}, "description": "State to wait for (default visible)."},
				"timeout": prop{"type": "integer", "minimum": 1, "maximum": 120000, "description": "Milliseconds to wait (default 30000)."}}, "selector"),
			body: `const state = args.state || 'visible', timeout = H.ms(args.timeout, 30000);
const loc = page.locator(args.selector);
try { await loc.first().waitFor({ state, timeout }); }
catch (e) {
  if (H.isTimeout(e)) throw H.coded('TIMEOUT', 'no element matching ' + JSON.stringify(args.selector) + ' became ' + state + ' within ' + timeout + ' ms');
  throw e;
}
return { success: true, state, count: await loc.count() };`},
	}
}

// describeJS runs in the page on one element.
const describeJS = `(e) => {
  const r = e.getBoundingClientRect();
  const s = window.getComputedStyle(e);
  const attributes = {};
  for (const a of ['id', 'class', 'name', 'type', 'href', 'src', 'value', 'placeholder', 'role', 'aria-label', 'title', 'alt', 'for']) {
    const v = e.getAttribute(a);
    if (v !== null) attributes[a] = v.slice(0, 300);
  }
  return {
    tag: e.tagName.toLowerCase(),
    text: ((e.innerText !== undefined ? e.innerText : e.textContent) || '').replace(/\s+/g, ' ').trim().slice(0, 300),
    attributes,
    visible: r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none',
    enabled: !e.disabled,
    box: { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) },
  };
}`

func historyBody(method string) string {
	return `const before = page.url();
const resp = await page.` + method + `({ waitUntil: args.waitUntil || 'load', timeout: H.ms(args.timeout, 30000) });
const w = await H.where(page);
return { moved: resp !== null || w.url !== before, url: w.url, title: w.title, status: resp ? resp.status() : null };`
}
