'use strict';
// Launches Chromium under a Playwright browser server inside the calling
// node process: browser-server.js (a process of its own, the browser that
// per-process workers share) and worker-host.js (its own browser, for the
// sessions it hosts) both start theirs here. Each client connects with its
// own WebSocket and gets a connection whose browser contexts no other
// connection sees, so every page is instrumented once, by this server.
// (Over connectOverCDP each client attaches to every page in the browser:
// the work per navigation grows with the number of sessions.)
//
// cfg: resolveFrom (where playwright-core is found), executable, headless,
// args, host, port, wsPath, debugPort (find Chromium's CDP port, opened
// by --remote-debugging-port=0 in args, for the proxy's live view).
const fs = require('fs');
const http = require('http');
const path = require('path');

// Clients are on this machine: deflating every message over 10 KB (a page
// snapshot is 40-500 KB) costs milliseconds on both ends and saves nothing
// on loopback. Playwright exports the options object its websocket server
// is built with; raising the threshold before the server starts means this
// side never compresses. Best effort: another Playwright keeps its default.
function noDeflate(from) {
  try {
    const core = require(require.resolve('playwright-core/lib/coreBundle', from));
    const deflate = core.utils && core.utils.perMessageDeflate;
    if (deflate && typeof deflate === 'object')
      deflate.threshold = Number.MAX_SAFE_INTEGER;
  } catch (e) {
    process.stderr.write('websocket compression left on: ' + (e && e.message) + '\n');
  }
}

// A WebSocket handshake that carries an Origin comes from a web page:
// browsers always send one, and the Playwright clients of this server
// never do. Playwright itself lets loopback origins through, so a page on
// 127.0.0.1 or localhost that learnt the endpoint could open a connection
// and, with a browser-level CDP session, reach every session's context.
// Such handshakes are refused before Playwright sees them, on every HTTP
// server of this process: it runs no other.
let guarded = false;
function refuseOrigins() {
  if (guarded)
    return;
  guarded = true;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, req, socket, ...rest) {
    if (event === 'upgrade' && req && req.headers && req.headers.origin !== undefined) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return true;
    }
    return emit.call(this, event, req, socket, ...rest);
  };
}

// debugEndpoint finds the CDP port of a browser launched with
// --remote-debugging-port=0: Chromium writes it to DevToolsActivePort in
// its user data dir, which Playwright chose and put on its command line.
// "" when the browser was not asked for one or never wrote the file.
async function debugEndpoint(proc, wanted) {
  if (!wanted)
    return '';
  const arg = (proc.spawnargs || []).find(a => a.startsWith('--user-data-dir='));
  if (!arg)
    return '';
  const file = path.join(arg.slice('--user-data-dir='.length), 'DevToolsActivePort');
  for (let i = 0; i < 200; i++) {
    try {
      const port = parseInt(fs.readFileSync(file, 'utf8').split('\n')[0], 10);
      if (port > 0)
        return 'http://127.0.0.1:' + port;
    } catch (e) {
      // Not written yet.
    }
    await new Promise(r => setTimeout(r, 50));
  }
  process.stderr.write('the browser wrote no DevToolsActivePort: no CDP endpoint for the live view\n');
  return '';
}

// launch starts the browser server; it resolves to the server, its
// endpoint, the browser's pid and its CDP endpoint ("" when none).
async function launch(cfg) {
  const from = { paths: [cfg.resolveFrom || process.cwd()] };
  const playwright = require(require.resolve('playwright-core', from));
  noDeflate(from);
  refuseOrigins();
  const server = await playwright.chromium.launchServer({
    executablePath: cfg.executable || undefined,
    headless: cfg.headless !== false,
    args: cfg.args || [],
    host: cfg.host || '127.0.0.1',
    port: cfg.port || 0,
    wsPath: cfg.wsPath || undefined,
    // The proxy signals this whole process group; Playwright's own
    // handlers would race it.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  const cdp = await debugEndpoint(server.process(), cfg.debugPort);
  return { server, endpoint: server.wsEndpoint(), browserPid: server.process().pid, cdp };
}

module.exports = { launch };
