'use strict';
// A person at the inspector's live view, in headless Chromium through the
// project's playwright-core, driven step by step by the Go test: one JSON
// command per line on stdin, one JSON answer per line on stdout
// ({"ok":true,...} or {"ok":false,"error":"..."}). Configuration comes as
// JSON in LIVE_CHECK. What the person types comes in commands and goes only
// into the live view, never into an answer.
const cfg = JSON.parse(process.env.LIVE_CHECK);
const { chromium } = require(cfg.playwright);
const readline = require('readline');

let browser, page;
const dialogs = [];
const pageErrors = [];

// colourAt is the colour of the frame shown at page point (x, y) (CSS
// pixels of the page's viewport), as 'r,g,b'.
async function colourAt(x, y) {
  return page.$eval('#frame', (img, p) => {
    if (!img.naturalWidth) return '';
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const sx = img.naturalWidth / Number(img.dataset.width), sy = img.naturalHeight / Number(img.dataset.height);
    const d = g.getImageData(Math.round(p.x * sx), Math.round(p.y * sy), 1, 1).data;
    return d[0] + ',' + d[1] + ',' + d[2] + ' (frame ' + img.naturalWidth + 'x' + img.naturalHeight + ' of a ' + img.dataset.width + 'x' + img.dataset.height + ' viewport)';
  }, { x, y });
}

// near reports whether colour 'r,g,b' is within 40 of want on each channel
// (JPEG moves colours a little).
function near(colour, want) {
  const a = colour.split(' ')[0].split(',').map(Number);
  return a.length === 3 && a.every((v, i) => Math.abs(v - want[i]) <= 40);
}

// clickAt clicks the shown frame where page point (x, y) is.
async function clickAt(x, y) {
  const box = await page.$eval('#frame', (img) => {
    const r = img.getBoundingClientRect();
    return { left: r.left, top: r.top, width: r.width, height: r.height, vw: Number(img.dataset.width), vh: Number(img.dataset.height) };
  });
  await page.mouse.click(box.left + x * box.width / box.vw, box.top + y * box.height / box.vh);
}

const steps = {
  async open() {
    browser = await chromium.launch({
      executablePath: cfg.chromium,
      args: ['--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
    page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    // Signed in once with the token: the inspector keeps an HttpOnly cookie.
    await page.goto(cfg.base + '/ui/');
    await page.waitForSelector('#login');
    await page.fill('#token', cfg.token);
    await page.click('#login button');
    await page.waitForSelector('#sessions tr[data-session="' + cfg.session + '"]');
    await page.goto(cfg.base + '/ui/sessions/' + cfg.session + '/live');
    await page.waitForSelector('#frame[src^="data:image/jpeg;base64,"]', { state: 'visible' });
    return {};
  },
  // colour waits until the frame shows colour rgb at (x, y), and says how
  // long that took from the command.
  async colour(c) {
    const start = Date.now();
    for (;;) {
      const got = await colourAt(c.x, c.y);
      if (near(got, c.rgb)) return { ms: Date.now() - start };
      if (Date.now() - start > c.within) return { ok: false, error: 'the frame shows ' + got + ' at ' + c.x + ',' + c.y + ', want ' + c.rgb };
      await new Promise((r) => setTimeout(r, 20));
    }
  },
  // list reads the sessions list as a person sees it: the page's title and
  // the session's waiting line.
  async list() {
    const other = await page.context().newPage();
    try {
      await other.goto(cfg.base + '/ui/');
      const row = '#sessions tr[data-session="' + cfg.session + '"]';
      await other.waitForSelector(row + ' .waiting-reason');
      return { title: await other.title(), waiting: await other.locator(row + ' .waiting-reason').textContent(), live: await other.locator(row + ' a.live-link').getAttribute('href') };
    } finally {
      await other.close();
    }
  },
  async state() {
    return { state: await page.locator('#live-state').textContent(), url: await page.locator('#live-url').textContent() };
  },
  async take() {
    await page.click('#take-control');
    await page.waitForSelector('#frame.holding');
    return { state: await page.locator('#live-state').textContent() };
  },
  async click(c) {
    await clickAt(c.x, c.y);
    return {};
  },
  async type(c) {
    await page.focus('#frame');
    await page.keyboard.type(c.text, { delay: 5 });
    // The view batches typed characters for a few milliseconds.
    await new Promise((r) => setTimeout(r, 100));
    return {};
  },
  async press(c) {
    await page.focus('#frame');
    await page.keyboard.press(c.key);
    return {};
  },
  async handBack() {
    await page.click('#hand-back');
    await page.waitForSelector('#frame:not(.holding)');
    return { state: await page.locator('#live-state').textContent() };
  },
  async close() {
    const out = { dialogs, pageErrors };
    await browser.close();
    return out;
  },
};

const rl = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
rl.on('line', (line) => {
  queue = queue.then(async () => {
    let out;
    try {
      const c = JSON.parse(line);
      out = Object.assign({ ok: true }, await steps[c.step](c));
    } catch (e) {
      out = { ok: false, error: String(e && e.stack || e) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  });
});
rl.on('close', () => queue.then(() => browser && browser.close()).finally(() => process.exit(0)));
