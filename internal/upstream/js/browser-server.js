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

// A WebSocket handshake that carries an Origin comes from a web page:
// browsers always send one, and the Playwright clients of this server (the
// workers) never do. Playwright itself lets loopback origins through, so a
// page on 127.0.0.1 or localhost that learnt the endpoint could open a
// connection and, with a browser-level CDP session, reach every session's
// context. Such handshakes are refused before Playwright sees them.
const http = require('http');
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, socket, ...rest) {
  if (event === 'upgrade' && req && req.headers && req.headers.origin !== undefined) {
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return true;
  }
  return emit.call(this, event, req, socket, ...rest);
};

// debugEndpoint finds the CDP port of a browser launched with
// --remote-debugging-port=0: Chromium writes it to DevToolsActivePort in
// its user data dir, which Playwright chose and put on its command line.
// "" when the browser was not asked for one or never wrote the file.
async function debugEndpoint(proc) {
  if (!cfg.debugPort)
    return '';
  const fs = require('fs');
  const path = require('path');
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
  const cdp = await debugEndpoint(server.process());
  process.stdout.write(JSON.stringify({ endpoint: server.wsEndpoint(), browserPid: server.process().pid, cdp }) + '\n');
})().catch(e => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(2);
});

process.stdin.on('end', () => stop(0));
process.stdin.on('error', () => stop(0));
process.stdin.resume();
process.on('SIGTERM', () => stop(0));
