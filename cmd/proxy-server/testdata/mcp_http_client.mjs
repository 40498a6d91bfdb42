// Drives proxy-server's /mcp with the official MCP TypeScript SDK, for
// TestStreamableHTTPWithOfficialSDK: two MCP sessions, each listing the tools
// (whole definitions, as the SDK parsed them) and navigating with its own
// value, then the first one terminated (DELETE). It prints one JSON object on
// stdout; the Go test checks it.
//
//   node mcp_http_client.mjs MCP_URL SITE_URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tools } from './sdk_tools.mjs';

const [mcpURL, siteURL] = process.argv.slice(2);
if (!mcpURL || !siteURL) {
  console.error('usage: node mcp_http_client.mjs MCP_URL SITE_URL');
  process.exit(2);
}
// A first browser call may start a worker and the browser on a busy machine.
const callOpts = { timeout: 120_000 };

async function connect(name) {
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL));
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// navigate reads the proxy's answer (one "key: value" line per fact; the
// page line is "page: <title> <url>") and the default session list_sessions
// names, since answers do not repeat it.
async function navigate(client, url) {
  const res = await client.callTool({ name: 'browser_navigate', arguments: { url } }, undefined, callOpts);
  const text = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
  if (res.isError) throw new Error(`browser_navigate ${url}: ${text}`);
  const facts = Object.fromEntries(text.split('\n').map((l) => l.split(': ')).filter((kv) => kv.length >= 2).map(([k, ...v]) => [k, v.join(': ')]));
  const page = facts.page ?? '';
  const listed = await client.callTool({ name: 'list_sessions', arguments: {} }, undefined, callOpts);
  const sessions = JSON.parse(listed.content.filter((c) => c.type === 'text').map((c) => c.text).join('')).sessions;
  return {
    session_id: sessions.find((s) => s.default)?.session_id ?? '',
    // "page: <title> <url>", or the title alone when the URL is the one sent.
    page_title: /^\S+:\/\//.test(page.slice(page.lastIndexOf(' ') + 1)) ? page.slice(0, Math.max(page.lastIndexOf(' '), 0)) : page,
    status: facts.ref_id && !facts.error ? 'success' : 'error',
  };
}

const out = {};
const a = await connect('sdk-a');
const b = await connect('sdk-b');
out.a = { mcp_session_id: a.transport.sessionId, protocol_version: a.transport.protocolVersion, tools: await tools(a.client) };
out.b = { mcp_session_id: b.transport.sessionId, tools: await tools(b.client) };

// Each sets its own value; the two first calls run at once.
[out.a.set, out.b.set] = await Promise.all([
  navigate(a.client, `${siteURL}/set.html?v=alpha`),
  navigate(b.client, `${siteURL}/set.html?v=beta`),
]);
out.a.read = await navigate(a.client, `${siteURL}/read.html`);
out.b.read = await navigate(b.client, `${siteURL}/read.html`);

// End the first MCP session; its Mcp-Session-Id must be refused afterwards.
const ended = a.transport.sessionId;
await a.transport.terminateSession();
await a.client.close();
const after = await fetch(mcpURL, {
  method: 'POST',
  headers: {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'Mcp-Session-Id': ended,
    'Mcp-Protocol-Version': out.a.protocol_version ?? '2025-11-25',
  },
  body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
});
out.a.status_after_terminate = after.status;

// The second one is still served.
out.b.read_after = await navigate(b.client, `${siteURL}/read.html?after=1`); // another URL: the answer names the page again
await b.client.close(); // no DELETE: the Go test checks b's session stays

// Exit once written: idle keep-alive sockets must not hold the test.
process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(0));
