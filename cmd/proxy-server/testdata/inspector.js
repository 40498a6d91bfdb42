'use strict';
// Drives the session inspector (/ui) in headless Chromium through the
// project's playwright-core, as a person would: sign in with the token, find
// the session, open its timeline, watch a call arrive, read a snapshot with
// search and its changes, the console, a screenshot. Configuration comes as
// JSON in INSPECTOR_CHECK; the outcome is one JSON line on stdout; any
// failed expectation exits non-zero with the reason on stderr.
const cfg = JSON.parse(process.env.INSPECTOR_CHECK);
const { chromium } = require(cfg.playwright);

function check(cond, what) {
  if (!cond) throw new Error('inspector: ' + what);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: cfg.chromium,
    args: ['--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const dialogs = [];
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));

    // The token flow: asked once, then remembered in an HttpOnly cookie.
    await page.goto(cfg.base + '/ui/');
    await page.waitForSelector('#login');
    await page.fill('#token', 'not-the-token');
    await page.click('#login button');
    await page.waitForFunction(() => document.querySelector('#login-error').textContent !== '');
    await page.fill('#token', cfg.token);
    await page.click('#login button');
    await page.waitForSelector('#sessions tr[data-session="' + cfg.session + '"]');
    const cookies = await page.context().cookies();
    const ui = cookies.find((c) => c.name === 'pwproxy_ui');
    check(ui && ui.httpOnly && ui.sameSite === 'Strict' && !ui.value.includes(cfg.token), 'cookie ' + JSON.stringify(cookies));
    check(await page.evaluate(() => document.cookie) === '', 'a script can read the cookie');

    // The session list shows the hostile title as text, filterable by state.
    const row = page.locator('#sessions tr[data-session="' + cfg.session + '"]');
    const title = await row.locator('td.title').textContent();
    check(title === cfg.hostileTitle, 'title cell reads ' + JSON.stringify(title));
    check(await page.locator('#sessions img').count() === 0, 'the title became markup');
    check((await row.locator('td.state').textContent()) === 'active', 'state');
    await page.selectOption('#state-filter', 'closed');
    await page.waitForFunction((id) => !document.querySelector('#sessions tr[data-session="' + id + '"]'), cfg.session);
    await page.selectOption('#state-filter', '');
    await page.waitForSelector('#sessions tr[data-session="' + cfg.session + '"]');
    await page.screenshot({ path: cfg.screenshotList });

    // The timeline, live: a call made now appears without a reload.
    await row.locator('a[href^="#/session/"]').click();
    await page.waitForSelector('#timeline tr.call');
    const before = await page.locator('#timeline tr.call').count();
    const r = await fetch(cfg.base + '/call', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + cfg.token },
      body: JSON.stringify({ session_id: cfg.session, tool: 'browser_snapshot', params: {} }),
    });
    check(r.ok, 'call through the API: ' + r.status);
    await page.waitForFunction((n) => document.querySelectorAll('#timeline tr.call').length > n, before, { timeout: 15000 });
    check(await page.locator('#timeline tr.call.error').count() >= 1, 'the failed call is not marked');
    check((await page.locator('#timeline tr.call.error td.error code').first().textContent()) === 'ELEMENT_NOT_FOUND', 'the failed call\'s error code');
    check(await page.locator('#timeline tr.event[data-event="created"]').count() === 1, 'the session\'s creation is not in its timeline');
    for (const kind of ['worker_lost', 'restarted', 'state_restored']) {
      check(await page.locator('#timeline tr.event[data-event="' + kind + '"]').count() >= 1, 'no ' + kind + ' event in the timeline');
    }
    check(await page.locator('#timeline tr.call .restored').count() === 1, 'the call after the restore is not marked restored');
    check((await page.getAttribute('#export-playwright', 'href')).endsWith('/export?format=playwright'), 'export link');
    await page.screenshot({ path: cfg.screenshotTimeline, fullPage: false });

    // A screenshot call shows its image.
    await page.goto(cfg.base + '/ui/#/call/' + cfg.session + '/' + cfg.screenshotRef);
    await page.waitForSelector('img.shot');
    const size = await page.locator('img.shot').first().evaluate((img) => img.naturalWidth);
    check(size > 100, 'screenshot width ' + size);

    // The click's page: what changed is highlighted, search finds lines,
    // the console shows its messages by level, as text.
    await page.goto(cfg.base + '/ui/#/call/' + cfg.session + '/' + cfg.clickRef);
    await page.waitForSelector('#snapshot .line');
    const added = await page.locator('#snapshot .line.added').allTextContents();
    check(added.some((l) => l.includes(cfg.changedText)), 'changed lines ' + JSON.stringify(added));
    check(!(await page.locator('main').textContent()).includes('null'), 'the page shows "null"');
    await page.screenshot({ path: cfg.screenshotCall, fullPage: false });
    await page.fill('#search', cfg.search);
    await page.waitForFunction(() => document.querySelector('#search-count').textContent !== '');
    const count = await page.locator('#search-count').textContent();
    check(/^[1-9]\d* matching lines$/.test(count), 'search count ' + count);
    check(await page.locator('#snapshot .line:not([hidden])').count() === parseInt(count, 10), 'search hides the other lines');
    await page.goto(cfg.base + '/ui/#/call/' + cfg.session + '/' + cfg.navigateRef);
    await page.waitForFunction(() => document.querySelector('#console') && document.querySelector('#console').textContent !== '');
    const consoleText = await page.locator('#console').textContent();
    check(consoleText.includes(cfg.consoleText), 'console ' + consoleText);
    await page.selectOption('#console-level', 'error');
    await page.waitForFunction(() => !document.querySelector('#console').textContent.includes('[LOG]'));
    check(await page.locator('#console b').count() === 0, 'console text became markup');

    // The Profiles page: the profile, the session started from it, its
    // deletion at the second click; never its contents.
    await page.goto(cfg.base + '/ui/#/profiles');
    const prow = page.locator('#profiles tr[data-profile="' + cfg.profile + '"]');
    await prow.waitFor();
    check((await prow.locator('td.origins').textContent()) === '127.0.0.1', 'profile origins');
    check((await prow.locator('td.sessions a').evaluateAll((as) => as.map((a) => a.getAttribute('href')))).includes('#/session/' + cfg.profileSession), 'the profile\'s session');
    await page.goto(cfg.base + '/ui/#/session/' + cfg.profileSession);
    await page.waitForSelector('#session-profile');
    check((await page.locator('#session-profile').textContent()).startsWith('Started from profile ' + cfg.profile + ' (version 1) · writes'), 'session profile ' + await page.locator('#session-profile').textContent());
    await page.click('#session-profile a');
    await prow.locator('button[data-action="delete"]').click();
    await prow.locator('button[data-action="really-delete"]').click();
    await prow.waitFor({ state: 'detached' });
    check(!(await page.content()).includes(cfg.profileSecret), 'the page holds the profile\'s contents');

    check(dialogs.length === 0, 'a page-controlled string ran: ' + JSON.stringify(dialogs));
    check(pageErrors.length === 0, 'inspector errors: ' + JSON.stringify(pageErrors));
    process.stdout.write(JSON.stringify({ ok: true, timelineRows: before + 1 }) + '\n');
  } finally {
    await browser.close();
  }
})().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
