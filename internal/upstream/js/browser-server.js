'use strict';
// Runs one Chromium under a Playwright browser server for the proxy's
// workers. Each worker connects with --endpoint and gets a connection whose
// browser contexts no other connection sees, so every page is instrumented
// once, by this server. (Over connectOverCDP each worker attaches to every
// page in the browser: the work per navigation grows with the number of
// sessions.)
//
// Protocol with the proxy: configuration as JSON in PWPROXY_BROWSER_SERVER;
// one JSON line on stdout once listening; stdin reaching EOF means stop. The
// process exits when the browser does, so the proxy sees a crash as an exit.
const cfg = JSON.parse(process.env.PWPROXY_BROWSER_SERVER || '{}');
const playwright = require(require.resolve('playwright-core', { paths: [cfg.resolveFrom || process.cwd()] }));

// Workers are on this machine: deflating every message over 10 KB (a page
// snapshot is 40-500 KB) costs milliseconds on both ends and saves nothing
// on loopback. Playwright exports the options object its websocket server
// is built with; raising the threshold before the server starts means this
// side never compresses. Best effort: another Playwright keeps its default.
try {
  const core = require(require.resolve('playwright-core/lib/coreBundle', { paths: [cfg.resolveFrom || process.cwd()] }));
  const deflate = core.utils && core.utils.perMessageDeflate;
  if (deflate && typeof deflate === 'object')
    deflate.threshold = Number.MAX_SAFE_INTEGER;
} catch (e) {
  process.stderr.write('websocket compression left on: ' + (e && e.message) + '\n');
}

let server;
let stopping = false;
async function stop(code) {
  if (stopping)
    return;
  stopping = true;
  try {
    if (server)
      await server.close();
  } finally {
    process.exit(code);
  }
}

(async () => {
  server = await playwright.chromium.launchServer({
    executablePath: cfg.executable || undefined,
    headless: cfg.headless !== false,
    args: cfg.args || [],
    host: cfg.host || '127.0.0.1',
    port: cfg.port || 0,
    wsPath: cfg.wsPath || undefined,
    // The proxy signals this whole process group; Playwright's own handlers
    // would race it.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  server.on('close', () => {
    if (!stopping) {
      process.stderr.write('browser exited\n');
      process.exit(3);
    }
  });
  process.stdout.write(JSON.stringify({ endpoint: server.wsEndpoint(), browserPid: server.process().pid }) + '\n');
})().catch(e => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(2);
});

process.stdin.on('end', () => stop(0));
process.stdin.on('error', () => stop(0));
process.stdin.resume();
process.on('SIGTERM', () => stop(0));
