'use strict';
// A probe, not part of the product: how much of a hosted call's latency is
// the hop to the shared Playwright browser server, and how much of it a
// browser server inside the session host itself (one Chromium per host)
// would save. The sides are alive together and called in turn, the order
// rotating, as in `bench overhead`:
//   plain   @playwright/mcp's cli.js with its own Chromium
//   host    internal/upstream/js/worker-host.js, its session on a browser
//           server in a process of its own (the proxy's design until session
//           hosts ran their own browsers)
//   inproc  the same host with a browser server launched in its own process
//           (what a session host now does itself, through cfg.browser)
// Run from the project root, after `npm ci`:
//   node docs/experiments/inproc-browser-probe.js [calls=300] [chromium=/usr/bin/chromium]
// It prints each side's median browser_evaluate and the median paired
// difference of each side against plain, in ms.
const { spawn } = require('child_process');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const readline = require('readline');

const root = process.cwd();
const calls = Number(process.argv[2]) || 300;
const chromium = process.argv[3] || '/usr/bin/chromium';
const warmup = 20;
const hostScript = path.join(root, 'internal/upstream/js/worker-host.js');
const chromiumArgs = process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [];
const nodeFlags = ['--optimize-for-size', '--single-threaded'];

// inproc: launch the browser server here, then run the host unchanged.
if (process.env.PROBE_INPROC) {
  const playwright = require(require.resolve('playwright-core', { paths: [root] }));
  playwright.chromium.launchServer({ executablePath: chromium, headless: true, args: chromiumArgs, host: '127.0.0.1', port: 0 }).then(server => {
    const cfg = JSON.parse(process.env.PWPROXY_WORKER_HOST);
    process.env.PWPROXY_WORKER_HOST = JSON.stringify({ ...cfg, endpoint: server.wsEndpoint() });
    require(hostScript);
  });
  return;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'inproc-probe-'));
// What Chromium and Playwright leave in TMPDIR goes with tmp.
const childEnv = { ...process.env, TMPDIR: tmp };
const rows = Array.from({ length: 200 }, (_, i) => `<tr><td>${i}</td><td>item ${i}</td><td>${i * 3}</td></tr>`).join('');
const page = `<html><head><title>probe</title></head><body><table>${rows}</table></body></html>`;
const lines = (proc, cb) => readline.createInterface({ input: proc.stdout }).on('line', cb);
const median = a => [...a].sort((x, y) => x - y)[a.length >> 1];

async function start(name, endpoint) {
  const out = path.join(tmp, name);
  const cfg = { resolveFrom: root, endpoint };
  const proc = name === 'plain'
    ? spawn('node', [...nodeFlags, path.join(root, 'node_modules/@playwright/mcp/cli.js'), '--isolated', '--headless',
      '--executable-path', chromium, ...chromiumArgs, '--output-dir', out, '--timeout-settle=0'], { env: childEnv, stdio: ['pipe', 'pipe', 'ignore'] })
    : spawn('node', [...nodeFlags, name === 'inproc' ? __filename : hostScript], {
      env: { ...childEnv, PWPROXY_WORKER_HOST: JSON.stringify(cfg), ...(name === 'inproc' ? { PROBE_INPROC: '1' } : {}) },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
  const enveloped = name !== 'plain';
  const waiting = new Map();
  let ready, opened;
  const readyP = new Promise(r => { ready = r; });
  const openedP = new Promise(r => { opened = r; });
  lines(proc, line => {
    const env = enveloped ? JSON.parse(line) : { m: JSON.parse(line) };
    if (env.ready) ready();
    if (env.opened) opened();
    if (env.m && waiting.has(env.m.id)) {
      waiting.get(env.m.id)(env.m);
      waiting.delete(env.m.id);
    }
  });
  const send = m => proc.stdin.write(JSON.stringify(enveloped ? { s: 'a', m } : m) + '\n');
  let id = 0;
  const req = (method, params) => new Promise(r => { waiting.set(++id, r); send({ jsonrpc: '2.0', id, method, params }); });
  if (enveloped) {
    await readyP;
    proc.stdin.write(JSON.stringify({ s: 'a', open: { config: { outputDir: out, filePaths: 'absolute' }, args: ['--timeout-settle=0'] } }) + '\n');
    await openedP;
  }
  await req('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { name, proc, req, times: [] };
}

(async () => {
  const site = http.createServer((q, r) => { r.setHeader('content-type', 'text/html'); r.end(page); }).listen(0, '127.0.0.1');
  await new Promise(r => site.on('listening', r));
  const url = `http://127.0.0.1:${site.address().port}/`;
  const browserServer = spawn('node', [path.join(root, 'internal/upstream/js/browser-server.js')], {
    env: { ...childEnv, PWPROXY_BROWSER_SERVER: JSON.stringify({ resolveFrom: root, executable: chromium, args: chromiumArgs }) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const endpoint = await new Promise(r => lines(browserServer, l => r(JSON.parse(l).endpoint)));
  const sides = [];
  for (const name of ['plain', 'host', 'inproc'])
    sides.push(await start(name, endpoint));
  for (const s of sides)
    await s.req('tools/call', { name: 'browser_navigate', arguments: { url } });
  for (let i = 0; i < warmup + calls; i++) {
    const k = i % sides.length;
    for (const s of [...sides.slice(k), ...sides.slice(0, k)]) {
      const t0 = process.hrtime.bigint();
      const answer = await s.req('tools/call', { name: 'browser_evaluate', arguments: { function: '() => document.title' } });
      if (answer.error || answer.result.isError)
        throw new Error(s.name + ': ' + JSON.stringify(answer));
      if (i >= warmup)
        s.times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  const plain = sides[0].times;
  for (const s of sides) {
    const added = s === sides[0] ? '' : `  − plain ${median(s.times.map((t, j) => t - plain[j])).toFixed(2)} ms`;
    console.log(`${s.name.padEnd(6)} p50 ${median(s.times).toFixed(2)} ms${added}`);
  }
  for (const s of sides)
    s.proc.stdin.end();
  browserServer.stdin.end();
  site.close();
  await Promise.all([...sides.map(s => s.proc), browserServer].map(p => new Promise(r => p.exitCode !== null ? r() : p.on('exit', r))));
  fs.rmSync(tmp, { recursive: true, force: true });
})().catch(e => {
  console.error(e);
  process.exit(1);
});
