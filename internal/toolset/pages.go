package toolset

// The programs behind the MCP page, element and network-log resources. They
// are never listed as tools: the session manager runs them in a live
// worker on a resource read, unrecorded, and they change nothing in the
// browser. A page's index is its place in the BrowserContext's pages,
// which is upstream's tab order.

// pickPage is args.page of the context's pages, or PAGE_NOT_FOUND.
const pickPage = `const pages = page.context().pages();
if (!Number.isInteger(args.page) || args.page < 0 || args.page >= pages.length)
  throw H.coded('PAGE_NOT_FOUND', 'the session has no page ' + args.page + ' (it has ' + pages.length + ', numbered from 0)');
const p = pages[args.page];
`

// settle bounds what a page answers through its own event loop (title,
// evaluate): a page stuck in a dialog or a busy script must not hold the
// read.
const settle = `const settle = (v, d) => Promise.race([Promise.resolve(v).catch(() => d), new Promise(r => setTimeout(() => r(d), 2000))]);
`

var (
	// PagesProgram answers {pages: [{index, url, title, current, viewport}]}.
	PagesProgram = &Own{Name: "resource_pages", ReadOnly: true, body: settle + `const pages = page.context().pages();
const out = [];
for (let i = 0; i < pages.length; i++) {
  const p = pages[i];
  const viewport = p.viewportSize() || await settle(p.evaluate(() => ({ width: window.innerWidth, height: window.innerHeight })), null);
  out.push({ index: i, url: p.url(), title: await settle(p.title(), ''), current: p === page, viewport, live: true });
}
return { pages: out };`}

	// TargetsProgram answers {pages: [{index, url, title, current,
	// target_id}]}: the session's pages with the Chromium target each is,
	// which the live view attaches to over CDP. It asks each page's own
	// target, so it can never name a page of another context. A browser
	// without CDP (Firefox, WebKit) has no target ids: target_id is "".
	TargetsProgram = &Own{Name: "live_targets", ReadOnly: true, body: settle + `const pages = page.context().pages();
const out = [];
for (let i = 0; i < pages.length; i++) {
  const p = pages[i];
  let target_id = '';
  try {
    const s = await p.context().newCDPSession(p);
    try { target_id = (await s.send('Target.getTargetInfo')).targetInfo.targetId; } finally { await s.detach().catch(() => {}); }
  } catch (e) {}
  out.push({ index: i, url: p.url(), title: await settle(p.title(), ''), current: p === page, target_id });
}
return { pages: out };`}

	// ControlScreenshotProgram answers {url, title, image: {mime_type,
	// data}}: the session's current page as a person takes or hands back
	// its browser, stored with the recorded call like screenshot_element's.
	ControlScreenshotProgram = &Own{Name: "human_control", ReadOnly: true, body: settle + `const buf = await page.screenshot({ type: 'png', timeout: 10000 });
return { url: page.url(), title: await settle(page.title(), ''), image: { mime_type: 'image/png', data: buf.toString('base64') } };`}

	// ElementProgram answers {ref, tag, attributes, bounding_box} of the
	// element args.ref names in the latest snapshot of page args.page.
	ElementProgram = &Own{Name: "resource_element", ReadOnly: true, body: pickPage + `const loc = p.locator('aria-ref=' + args.ref);
if (await loc.count() === 0)
  throw H.coded('ELEMENT_NOT_FOUND', 'no element has ref ' + args.ref + ' in the latest snapshot of page ' + args.page);
const el = loc.first();
const d = await el.evaluate(e => ({
  tag: e.tagName.toLowerCase(),
  attributes: Object.fromEntries(Array.from(e.attributes).slice(0, 200).map(a => [a.name, a.value.slice(0, 4000)])),
}), undefined, { timeout: 5000 });
return { ref: args.ref, tag: d.tag, attributes: d.attributes, bounding_box: await el.boundingBox({ timeout: 5000 }) };`}

	// NetworkProgram answers {entries: [{method, url, resource_type,
	// status, failure, timing}]}: the page's recent requests as Playwright
	// keeps them, oldest first, at most args.limit.
	NetworkProgram = &Own{Name: "resource_network_log", ReadOnly: true, body: pickPage + `const all = await p.requests();
const entries = [];
for (const r of all.slice(-args.limit)) {
  const failure = r.failure();
  const resp = failure ? null : await Promise.race([r.response().catch(() => null), new Promise(res => setTimeout(() => res(null), 250))]);
  const t = r.timing();
  entries.push({
    method: r.method(), url: r.url(), resource_type: r.resourceType(), status: resp ? resp.status() : null,
    failure: failure ? failure.errorText : '',
    timing: {
      start_time: t.startTime, domain_lookup_start: t.domainLookupStart, domain_lookup_end: t.domainLookupEnd,
      connect_start: t.connectStart, secure_connection_start: t.secureConnectionStart, connect_end: t.connectEnd,
      request_start: t.requestStart, response_start: t.responseStart, response_end: t.responseEnd,
    },
  });
}
return { entries };`}
)
