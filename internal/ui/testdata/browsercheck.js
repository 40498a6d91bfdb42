'use strict';
// The frame of the inspector's browser checks: headless Chromium through
// the project's playwright-core, one 1280×800 page, its dialogs and page
// errors counted as failures, the outcome one JSON line on stdout, a failed
// expectation (check) a non-zero exit with its reason. Configuration comes
// as JSON in the environment variable the Go test names.
function config(env) {
  return JSON.parse(process.env[env]);
}

function checker(name) {
  return (cond, what) => {
    if (!cond) throw new Error(name + ': ' + what);
  };
}

// run launches the browser, gives body(page) a fresh page, and reports.
function run(cfg, check, body) {
  const { chromium } = require(cfg.playwright);
  (async () => {
    const browser = await chromium.launch({
      executablePath: cfg.chromium,
      args: ['--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const dialogs = [];
    const pageErrors = [];
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      await body(page);
      check(dialogs.length === 0, 'a dialog opened: ' + JSON.stringify(dialogs));
      check(pageErrors.length === 0, 'page errors: ' + JSON.stringify(pageErrors));
      process.stdout.write(JSON.stringify({ ok: true }) + '\n');
    } finally {
      await browser.close();
    }
  })().catch((e) => {
    process.stderr.write(String(e && e.stack || e) + '\n');
    process.exit(1);
  });
}

module.exports = { config, checker, run };
