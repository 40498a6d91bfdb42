'use strict';
// Runs one Chromium under a Playwright browser server (browser-launch.js)
// for the proxy's worker processes, each of which connects with --endpoint.
//
// Protocol with the proxy: configuration as JSON in PWPROXY_BROWSER_SERVER
// (browser-launch.js's cfg); one JSON line on stdout once listening; stdin
// reaching EOF means stop. The process exits when the browser does, so the
// proxy sees a crash as an exit.
const path = require('path');
const { launch } = require(path.join(__dirname, 'browser-launch.js'));

const cfg = JSON.parse(process.env.PWPROXY_BROWSER_SERVER || '{}');

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
  const b = await launch(cfg);
  server = b.server;
  server.on('close', () => {
    if (!stopping) {
      process.stderr.write('browser exited\n');
      process.exit(3);
    }
  });
  process.stdout.write(JSON.stringify({ endpoint: b.endpoint, browserPid: b.browserPid, cdp: b.cdp }) + '\n');
})().catch(e => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(2);
});

process.stdin.on('end', () => stop(0));
process.stdin.on('error', () => stop(0));
process.stdin.resume();
process.on('SIGTERM', () => stop(0));
