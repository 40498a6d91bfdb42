'use strict';
// Drives the inspector's sessions list and a session's live view in
// headless Chromium through the project's playwright-core, as an operator
// would: see who waits, open the live view, take control, click, type,
// press keys, paste, scroll, switch tabs, live through a dropped socket,
// save a profile, hand back. The Go test's fake records what reached the
// socket. Configuration comes as JSON in LIVE_CHECK; the outcome is one JSON
// line on stdout; a failed expectation exits non-zero with the reason.
const { config, checker, run } = require('./browsercheck.js');

const cfg = config('LIVE_CHECK');
const check = checker('live');

run(cfg, check, async (page) => {
  const inputs = async () => (await page.request.get(cfg.base + '/test/inputs')).json();
  const text = async (sel) => page.locator(sel).textContent();
  const messageIs = (want) => page.waitForFunction((w) => document.querySelector('#live-message').textContent.includes(w), want);

  // The list: the title counts the waiting sessions, a waiting one shows
  // its reason (a hostile one as text), every active one links to its
  // live view.
  await page.goto(cfg.base + '/ui/');
  await page.waitForSelector('#sessions tr[data-session="s-live"]');
  check(await page.title() === '(2 waiting) Sessions · playwright-mcp-proxy', 'the title reads ' + await page.title());
  check((await text('#sessions tr[data-session="s-live"] .waiting-reason')) === 'waiting: Enter the 2FA code', 'the waiting reason');
  check((await text('#sessions tr[data-session="s-cookie"] .waiting-reason')) === 'waiting: ' + cfg.hostileTitle, 'a hostile reason is not text');
  check(await page.locator('#sessions img').count() === 0, 'a reason became markup');
  check(await page.locator('#sessions tr[data-session="s-gone"] .waiting-reason').count() === 0, 'a session not waiting shows a reason');
  const live = (id) => page.locator('#sessions tr[data-session="' + id + '"] a.live-link');
  for (const id of ['s-live', 's-cookie', 's-gone']) {
    check(await live(id).getAttribute('href') === 'sessions/' + id + '/live', id + ' has no Live link');
  }
  check(await live('s-closed').count() === 0, 'a closed session has a Live link');

  // The live view: a frame, the tabs, the page's address, the agent's
  // reason; no control yet.
  await live('s-live').click();
  await page.waitForURL(cfg.base + '/ui/sessions/s-live/live');
  await page.waitForSelector('#frame[src^="data:image/jpeg;base64,"]', { state: 'visible' });
  check(await page.locator('#live-tabs button.tab').count() === 2, 'the tabs');
  check((await text('#live-tabs button.current')) === 'Sign in', 'the current tab');
  check((await text('#live-tabs button[data-target="T2"]')) === cfg.hostileTitle, 'a hostile tab title is not text');
  check(await page.locator('#live-tabs img').count() === 0, 'a tab title became markup');
  check((await text('#live-url')) === 'https://login.example/2fa', 'the page\'s address');
  check((await text('#live-state')).includes('The agent waits for a person: Enter the 2FA code'), 'the state line reads ' + await text('#live-state'));
  check(!(await page.isDisabled('#take-control')), 'Take control is disabled');
  check(await page.isDisabled('#hand-back'), 'Hand back is enabled without control');

  // Without control, nothing goes to the page.
  await page.click('#frame');
  await page.keyboard.type('x');
  await page.keyboard.press('Enter');
  check((await inputs()).length === 0, 'input sent without control: ' + JSON.stringify(await inputs()));

  // Take control: the lease goes to the socket, the state says yours.
  await page.click('#take-control');
  await page.waitForSelector('#frame.holding');
  check((await text('#live-state')).startsWith('You hold control since'), 'the state line reads ' + await text('#live-state'));
  check(await page.isDisabled('#take-control'), 'Take control is enabled while held');
  if (cfg.screenshot) await page.screenshot({ path: cfg.screenshot });

  // A click at a quarter across and half down the shown frame is at
  // (320, 400) of the 1280×800 page.
  // The image inside its border.
  const box = await page.$eval('#frame', (f) => {
    const r = f.getBoundingClientRect();
    return { x: r.left + f.clientLeft, y: r.top + f.clientTop, width: f.clientWidth, height: f.clientHeight };
  });
  check(box.width > 100 && box.width < 1280, 'the frame is not scaled to fit: ' + JSON.stringify(box));
  // Pointer events carry whole CSS px of this page: click on one and
  // expect exactly its place in the page's viewport.
  const cx = Math.round(box.x + box.width * 0.25);
  const cy = Math.round(box.y + box.height * 0.5);
  await page.mouse.click(cx, cy);
  const want = { x: (cx - box.x) * 1280 / box.width, y: (cy - box.y) * 800 / box.height };
  for (let i = 0; ; i++) {
    const pressed = (await inputs()).find((m) => m.Msg.type === 'mouse' && m.Msg.event === 'pressed');
    if (pressed) {
      check(Math.abs(pressed.Msg.x - want.x) <= 0.1 && Math.abs(pressed.Msg.y - want.y) <= 0.1,
        'the click at ' + JSON.stringify(want) + ' reached the page at ' + JSON.stringify(pressed.Msg));
      break;
    }
    check(i < 200, 'the click did not arrive');
    await new Promise((r) => setTimeout(r, 50));
  }
  // A press on the frame released outside it is released in the page too,
  // at the frame's edge.
  await page.mouse.down();
  await page.mouse.move(box.x + box.width + 40, cy, { steps: 2 });
  await page.mouse.up();
  await page.mouse.move(cx, cy);
  await page.mouse.wheel(0, 300);
  await page.keyboard.type('hello');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  check(await page.evaluate(() => document.activeElement && document.activeElement.id) === 'frame', 'Tab left the view');
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData('text/plain', 'pasted text');
    document.getElementById('frame').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  });
  await page.click('#live-tabs button[data-target="T2"]');
  await page.waitForSelector('#live-tabs button.current[data-target="T2"]');
  check((await text('#live-url')) === 'https://login.example/help', 'the address after the tab switch');

  // An error after the first frame is shown and ends nothing.
  await page.request.post(cfg.base + '/test/fail');
  await messageIs('UPSTREAM_UNAVAILABLE: the session\'s tabs cannot be read now');
  check(await page.locator('#no-frame').isHidden(), 'a passing error ended the live view');
  check(await page.locator('#frame.holding').count() === 1, 'a passing error took the control away');

  // A dropped socket comes back and binds the lease again.
  await page.request.post(cfg.base + '/test/drop');
  for (let i = 0; ; i++) {
    const ins = await inputs();
    if (ins.some((m) => m.Conn === 2 && m.Msg.type === 'lease')) break;
    check(i < 200, 'no reconnect with the lease: ' + JSON.stringify(ins));
    await new Promise((r) => setTimeout(r, 50));
  }
  await page.waitForSelector('#frame.holding');
  await page.focus('#frame');
  await page.keyboard.type('after');
  await page.keyboard.press('Shift'); // no text: a modifier alone sends nothing
  for (let i = 0; ; i++) {
    const typed = (await inputs()).filter((m) => m.Conn === 2 && m.Msg.type === 'text').map((m) => m.Msg.text).join('');
    if (typed === 'after') break;
    check(i < 200, 'typing after the reconnect did not arrive: ' + typed);
    await new Promise((r) => setTimeout(r, 50));
  }

  // Save as profile: the answer, then a refusal with its code.
  await page.click('#save-profile');
  await page.fill('#profile-name', 'github');
  await page.click('#profile-form button[type="submit"]');
  await messageIs('Saved profile github, version 2.');
  check(await page.locator('#profile-form').isHidden(), 'the profile form stays open after saving');
  await page.click('#save-profile');
  await page.fill('#profile-name', 'Not A Name');
  await page.click('#profile-form button[type="submit"]');
  await messageIs('INVALID_PARAMETERS');
  check(await page.getAttribute('#live-message', 'class') === 'error', 'the refusal is not shown as an error');
  await page.click('#profile-cancel');

  // Hand back: the lease goes with it; the view watches again.
  await page.click('#hand-back');
  await messageIs('Handed back to the agent.');
  await page.waitForSelector('#frame:not(.holding)');
  check(await page.isDisabled('#hand-back'), 'Hand back is enabled after handing back');
  check((await text('#live-state')).startsWith('The agent drives this browser.'), 'the state line after hand-back: ' + await text('#live-state'));
  await page.mouse.click(box.x + 10, box.y + 10);
  await page.keyboard.type('late');

  // A session whose browser has no CDP has no live view, and says so.
  await page.goto(cfg.base + '/ui/sessions/s-gone/live');
  await page.waitForFunction(() => document.querySelector('#no-frame').textContent.startsWith('no live view for this session ('));
  check(await page.isDisabled('#take-control'), 'Take control is enabled without a live view');
});
