'use strict';
// One Node process hosting up to maxSessions @playwright/mcp sessions, each
// its own MCP server (upstream's createConnection) on its own BrowserContext,
// reached over its own connection to a Playwright browser server. A process
// per session costs a whole Node heap and module graph each; here they are
// paid once. With cfg.browser the host runs that browser server itself
// (browser-launch.js), so a session's Playwright round trips stay inside
// this process instead of waking a browser server process for each.
//
// Protocol with the proxy (stdin and stdout carry one JSON object a line):
//   in   {"s":"<key>","open":{...}}   open a session (fields: see openSession)
//        {"s":"<key>","m":<JSON-RPC>} a message for that session's server
//        {"s":"<key>","close":true}   close it: server, context, connection
//        {"ping":<any>}               host liveness and load ("gc":true
//                                     collects first, under --expose-gc)
//   out  {"ready":{"pid":..,"version":..,   once, when the host can open sessions;
//          "browser":{"endpoint":..,"pid":..,"cdp":..}}}  browser: its own, if any
//        {"s":"<key>","opened":{"ms":..}}   the session is ready for initialize
//        {"s":"<key>","m":<JSON-RPC>}       a message from that session's server
//        {"s":"<key>","closed":{"reason":..}} the session is gone (asked, failed,
//                                           or its open failed)
//        {"s":"<key>","refused":".."}       an open refused before anything was
//                                           made (key in use, host full, bad spec)
//        {"pong":<any>,"sessions":n,"heapUsed":..,"rss":..}
//        {"error":"..."}                    a line the host could not use
// Configuration as JSON in PWPROXY_WORKER_HOST (resolveFrom, maxSessions,
// endpoint, browserName, headers; browser: browser-launch.js's cfg for a
// browser of the host's own, the endpoint of sessions that name none).
// stdin reaching EOF closes every session, then the browser, and ends the
// process with 0. The host's own browser exiting ends it with 3: its
// sessions are gone with their pages. Logs go to stderr.
//
// Containment between the sessions of one process:
// - Every callback runs in its session's AsyncLocalStorage context: messages
//   are delivered inside it, and the session's connection to the browser
//   server is opened inside it, so Playwright's events for that session's
//   pages run in it too. Node gives unhandledRejection and uncaughtException
//   handlers the context of the promise or callback that failed.
// - Upstream adds a process-wide unhandledRejection listener per session and
//   reports whatever it hears in that session's next answer. Those listeners
//   are kept per session here, and one host listener hands a rejection only
//   to the session it came from; one from no session is logged, no answer.
// - An uncaught exception inside a session's context ends that session only
//   (its state is discarded; the proxy sees it closed, like a worker exit).
//   One from no session means the host's own state is suspect: it exits 70
//   and the proxy restarts its sessions.
// - Upstream reads no CLI flags or PLAYWRIGHT_MCP_* variables here: every
//   setting is in the open message. Its workspace root would be this
//   process's directory; each session's is given through MCP roots instead,
//   answered here, so the proxy's client need not know about them.
const { AsyncLocalStorage } = require('async_hooks');
const readline = require('readline');
const { pathToFileURL } = require('url');

const cfg = JSON.parse(process.env.PWPROXY_WORKER_HOST || '{}');
const from = { paths: [cfg.resolveFrom || process.cwd()] };
const path = require('path');
const { createConnection } = require(require.resolve('@playwright/mcp', from));
const playwright = require(require.resolve('playwright-core', from));
const mcpVersion = require(require.resolve('@playwright/mcp/package.json', from)).version;
// The playwright-core @playwright/mcp itself loads: its CLI parsing is
// what gives a session's args the meaning they have for cli.js.
const mcpFrom = { paths: [path.dirname(require.resolve('@playwright/mcp/package.json', from))] };
const { program } = require(require.resolve('playwright-core/lib/utilsBundle', mcpFrom));
const { tools } = require(require.resolve('playwright-core/lib/coreBundle', mcpFrom));

const maxSessions = cfg.maxSessions || 16;
const closeTimeoutMs = cfg.closeTimeoutMs || 10000;
// See openFirstPage; a negative firstPageDelayMs leaves the first page to
// the session's first call.
const firstPageDelayMs = cfg.firstPageDelayMs || 1000;
const firstPagePollMs = 250;
const firstPageMaxWaitMs = 5000;

// stdout is the protocol: nothing else may write there.
const stdoutWrite = process.stdout.write.bind(process.stdout);
for (const name of ['log', 'info', 'debug'])
  console[name] = console.error;
function out(obj) {
  stdoutWrite(JSON.stringify(obj) + '\n');
}
function log(msg, key) {
  process.stderr.write((key === undefined ? 'host' : 'session ' + key) + ': ' + msg + '\n');
}
function describe(e) {
  return String((e && e.stack) || e);
}

const als = new AsyncLocalStorage();
const sessions = new Map();
// ownBrowser is the browser server this host runs (cfg.browser), if any.
let ownBrowser;

// Rejection listeners added while a session's code runs belong to that
// session. Listeners added outside any session stay on the process.
const addListener = process.on;
const prependListener = process.prependListener;
const removeListener = process.removeListener;
function adding(orig) {
  return function (event, listener) {
    const s = event === 'unhandledRejection' ? als.getStore() : undefined;
    if (!s)
      return orig.apply(this, arguments);
    s.rejectionListeners.add(listener);
    return this;
  };
}
process.on = process.addListener = adding(addListener);
process.prependListener = adding(prependListener);
process.off = process.removeListener = function (event, listener) {
  if (event === 'unhandledRejection') {
    for (const s of sessions.values()) {
      if (s.rejectionListeners.delete(listener))
        return this;
    }
  }
  return removeListener.apply(this, arguments);
};

addListener.call(process, 'unhandledRejection', reason => {
  const s = als.getStore();
  if (!s) {
    log('unhandled rejection outside any session: ' + describe(reason));
    return;
  }
  if (s.rejectionListeners.size === 0)
    log('unhandled rejection: ' + describe(reason), s.key);
  for (const listener of [...s.rejectionListeners])
    listener(reason);
});

addListener.call(process, 'uncaughtException', err => {
  const s = als.getStore();
  if (!s) {
    log('uncaught exception outside any session, exiting: ' + describe(err));
    process.exit(70);
  }
  log('uncaught exception, closing the session: ' + describe(err), s.key);
  void closeSession(s, 'uncaught exception: ' + String((err && err.message) || err));
});

// SessionTransport is the MCP SDK's transport shape (start, send, close and
// the on* callbacks) over the host's stdout for one session.
class SessionTransport {
  constructor(s) {
    this._s = s;
  }
  async start() {}
  async send(message) {
    const s = this._s;
    if (message.method === 'roots/list' && message.id !== undefined) {
      // Upstream asks for roots to find its workspace; the answer is the
      // session's own, never this process's directory.
      const roots = [{ uri: pathToFileURL(s.workspace).href, name: 'workspace' }];
      queueMicrotask(() => this.onmessage?.({ jsonrpc: '2.0', id: message.id, result: { roots } }));
      return;
    }
    if (s.closed)
      return;
    if (message.id !== undefined && message.method === undefined)
      s.inFlight.delete(message.id);
    out({ s: s.key, m: message });
  }
  deliver(message) {
    if (message.id !== undefined && message.method !== undefined)
      this._s.inFlight.add(message.id);
    if (message.method === 'initialize' && message.params) {
      // Advertise roots so that upstream asks for them (see send).
      message.params.capabilities = { ...message.params.capabilities, roots: {} };
    }
    this.onmessage?.(message);
  }
  async close() {
    this.onclose?.();
  }
}

// configFromArgs turns cli.js's command-line flags into upstream's Config
// the way cli.js does (its own option parser, PLAYWRIGHT_MCP_* variables of
// this process, a --config file), so a flag means the same in a host as in
// a worker process of its own. A flag cli.js would refuse is refused.
async function configFromArgs(args) {
  const cmd = program.createCommand('playwright-mcp');
  tools.decorateMCPCommand(cmd, mcpVersion);
  let options;
  cmd.action(o => { options = o; });
  cmd.exitOverride();
  // Help or an error must not reach stdout, which is the protocol.
  const toStderr = s => process.stderr.write(s);
  cmd.configureOutput({ writeOut: toStderr, writeErr: toStderr });
  cmd.parse(args, { from: 'user' });
  if (options.vision) {
    options.caps ??= [];
    options.caps.push('vision');
  }
  if (options.caps?.includes('tracing'))
    options.caps.push('devtools');
  return await tools.resolveCLIConfigForMCP(options);
}

// openSession's spec: endpoint, browserName and headers of the browser
// server (the host's own by default), contextOptions for the session's
// BrowserContext, config for upstream (its Config type; config.outputDir
// is required, never shared), args (cli.js flags, see configFromArgs;
// config's fields win over theirs, and the context options they imply sit
// under contextOptions), workspace (the root for files the model names;
// default config.outputDir), lazy (connect on the first tool call instead
// of now).
async function openSession(key, spec) {
  if (sessions.has(key))
    throw new Error('session ' + key + ' is already open');
  if (sessions.size >= maxSessions)
    throw new Error('this host holds ' + sessions.size + ' sessions, its maximum');
  let config = spec.config || {};
  let contextOptions = spec.contextOptions || {};
  if (Array.isArray(spec.args)) {
    const fromArgs = await configFromArgs(spec.args);
    config = { ...fromArgs, ...config };
    contextOptions = { ...fromArgs.browser?.contextOptions, ...contextOptions };
  }
  if (!config.outputDir)
    throw new Error('config.outputDir is required: without it upstream writes under the host\'s directory');
  const endpoint = spec.endpoint || cfg.endpoint || (ownBrowser && ownBrowser.endpoint);
  if (!endpoint)
    throw new Error('no browser server endpoint');
  const engine = spec.browserName || cfg.browserName || 'chromium';
  if (!['chromium', 'firefox', 'webkit'].includes(engine))
    throw new Error('unknown browser ' + engine);
  const browserType = playwright[engine];
  const s = {
    key,
    workspace: spec.workspace || config.outputDir,
    rejectionListeners: new Set(),
    // Requests the server has not answered: a closing session answers
    // them with an error, so that no caller waits for a server that is gone.
    inFlight: new Set(),
    pending: [],
    closed: false,
    server: undefined,
    transport: undefined,
    browser: undefined,
    context: undefined,
    connecting: undefined, // the browser connection and context
    ready: undefined, // the same with the first page open
    firstPageTimer: undefined,
  };
  sessions.set(key, s);
  const connect = async () => {
    s.browser = await browserType.connect(endpoint, { headers: spec.headers || cfg.headers, timeout: spec.connectTimeoutMs || 30000 });
    s.browser.on('disconnected', () => void closeSession(s, 'browser disconnected'));
    if (s.closed) {
      await s.browser.close();
      throw new Error('session closed');
    }
    s.context = await s.browser.newContext(contextOptions);
    return s.context;
  };
  // A lazy session whose browser cannot be reached is closed: every later
  // call would fail the same way.
  const connected = () => (s.connecting ??= connect().catch(e => {
    if (spec.lazy)
      void closeSession(s, 'browser connection failed: ' + String((e && e.message) || e));
    throw e;
  }));
  // Upstream's getter hands over the context with a first page in it. A
  // new context's first page starts a renderer, most of what a session's
  // first call would otherwise wait for; opened ahead (openFirstPage),
  // that wait passes while the session is still a spare. Upstream adopts
  // the page as its first tab, as it adopts any page a context it is
  // given already holds. A page that cannot be opened here is left to
  // upstream, which opens its own or says why it cannot.
  const getContext = () => (s.ready ??= connected().then(async context => {
    await context.newPage().catch(e => {
      if (!s.closed)
        log('opening the first page ahead: ' + describe(e), s.key);
    });
    return context;
  }));
  try {
    await als.run(s, async () => {
      // isolated would make upstream ask the context getter for a browser
      // and create a context itself; the context here is already the
      // session's own.
      const upstreamConfig = { ...config, browser: { ...config.browser, isolated: false } };
      s.server = await createConnection(upstreamConfig, getContext);
      s.transport = new SessionTransport(s);
      await s.server.connect(s.transport);
      if (!spec.lazy) {
        await connected();
        if (firstPageDelayMs > 0)
          openFirstPage(s, getContext, firstPageDelayMs);
      }
    });
  } catch (e) {
    await closeSession(s, 'open failed: ' + String((e && e.message) || e));
    return;
  }
  for (const m of s.pending.splice(0))
    als.run(s, () => s.transport.deliver(m));
}

// openFirstPage has a new session open its first page (getContext) in
// the background once the host is quiet. A spare is opened the moment
// the pool hands out the one before it, whose first call is then starting
// in this host: a renderer started at that moment would compete with that
// call for the CPU. So the page waits delayMs, then for the host's other
// sessions to have no call in flight, at most firstPageMaxWaitMs more; a
// call to the session itself opens it at once. Only a failed connection
// rejects getContext, and the call that needs it reports that.
function openFirstPage(s, getContext, delayMs, deadline = Date.now() + delayMs + firstPageMaxWaitMs) {
  s.firstPageTimer = setTimeout(() => {
    s.firstPageTimer = undefined;
    if (s.closed || s.ready)
      return;
    const busy = [...sessions.values()].some(o => o !== s && o.inFlight.size > 0);
    if (busy && Date.now() < deadline) {
      openFirstPage(s, getContext, firstPagePollMs, deadline);
      return;
    }
    als.run(s, getContext).catch(() => {});
  }, delayMs);
}

// endCalls marks s closed and answers every call it has not answered
// (queued ones too) with an error naming reason.
function endCalls(s, reason) {
  s.closed = true;
  clearTimeout(s.firstPageTimer);
  for (const m of s.pending.splice(0)) {
    if (m.id !== undefined && m.method !== undefined)
      s.inFlight.add(m.id);
  }
  for (const id of s.inFlight)
    out({ s: s.key, m: { jsonrpc: '2.0', id, error: { code: -32000, message: 'session ' + s.key + ' closed: ' + reason } } });
  s.inFlight.clear();
}

async function closeSession(s, reason) {
  if (s.closed)
    return;
  endCalls(s, reason);
  const steps = (async () => {
    await s.server?.close().catch(e => log('server close: ' + describe(e), s.key));
    await s.context?.close().catch(() => {});
    await s.browser?.close().catch(() => {});
  })();
  let timer;
  await Promise.race([steps, new Promise(r => { timer = setTimeout(r, closeTimeoutMs); })]);
  clearTimeout(timer);
  sessions.delete(s.key);
  out({ s: s.key, closed: { reason } });
}

function onLine(line) {
  if (!line.trim())
    return;
  let env;
  try {
    env = JSON.parse(line);
  } catch (e) {
    out({ error: 'not JSON: ' + e.message });
    return;
  }
  if (env.ping !== undefined) {
    // gc: a measurement's request for a full collection first; only a host
    // started with --expose-gc has one.
    if (env.gc && typeof global.gc === 'function')
      global.gc();
    const mem = process.memoryUsage();
    out({ pong: env.ping, sessions: sessions.size, heapUsed: mem.heapUsed, rss: mem.rss });
    return;
  }
  const key = env.s;
  if (typeof key !== 'string' || key === '') {
    out({ error: 'an envelope needs "s", a session key, or "ping"' });
    return;
  }
  if (env.open) {
    const start = Date.now();
    openSession(key, env.open).then(
        () => {
          const s = sessions.get(key);
          if (s && !s.closed)
            out({ s: key, opened: { ms: Date.now() - start } });
        },
        e => out({ s: key, refused: String((e && e.message) || e) }));
    return;
  }
  const s = sessions.get(key);
  if (env.close) {
    if (s)
      void closeSession(s, 'closed');
    else
      out({ s: key, closed: { reason: 'not open' } });
    return;
  }
  if (env.m !== undefined) {
    if (!s || s.closed) {
      if (env.m && env.m.id !== undefined && env.m.method)
        out({ s: key, m: { jsonrpc: '2.0', id: env.m.id, error: { code: -32000, message: 'session ' + key + ' is not open' } } });
      return;
    }
    if (!s.transport) {
      s.pending.push(env.m);
      return;
    }
    als.run(s, () => s.transport.deliver(env.m));
    return;
  }
  out({ s: key, error: 'an envelope needs open, m or close' });
}

let ending = false;
async function end() {
  if (ending)
    return;
  ending = true;
  await Promise.all([...sessions.values()].map(s => closeSession(s, 'host stopping')));
  if (ownBrowser) {
    let timer;
    await Promise.race([ownBrowser.server.close().catch(() => {}), new Promise(r => { timer = setTimeout(r, closeTimeoutMs); })]);
    clearTimeout(timer);
  }
  process.exit(0);
}

async function start() {
  let browser;
  if (cfg.browser) {
    const { launch } = require(path.join(__dirname, 'browser-launch.js'));
    ownBrowser = await launch({ ...cfg.browser, resolveFrom: cfg.resolveFrom });
    ownBrowser.server.on('close', () => {
      if (ending)
        return;
      // Every session lost its pages with the browser: each is reported
      // closed for that reason (as when a browser node goes), so that the
      // proxy restores it without holding the loss against it.
      log('browser exited; ending the host and its sessions');
      for (const s of sessions.values()) {
        if (s.closed)
          continue;
        endCalls(s, 'browser disconnected');
        out({ s: s.key, closed: { reason: 'browser disconnected' } });
      }
      process.exit(3);
    });
    browser = { endpoint: ownBrowser.endpoint, pid: ownBrowser.browserPid, cdp: ownBrowser.cdp };
  }
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', onLine);
  rl.on('close', () => void end());
  out({ ready: { pid: process.pid, version: mcpVersion, browser } });
}
process.on('SIGTERM', () => void end());
start().catch(e => {
  log('could not start: ' + describe(e));
  process.exit(2);
});
