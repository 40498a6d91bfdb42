// Drives proxy-server's /ws with the official MCP TypeScript SDK's
// WebSocketClientTransport, for TestWebSocketWithOfficialSDK: two
// connections (two MCP clients: the operator's token and a client token,
// each in the token query parameter, as a browser would send it) list the
// tools and navigate with their own value; the tools of /mcp are listed
// too, for the comparison. It prints that as one JSON line, reads b's ref
// back on stdin (the Go test parses the answers), then a tries b's session
// and ref, a closes its socket and b goes on; a second JSON line says how
// that went.
//
//   node --experimental-websocket mcp_ws_client.mjs WS_URL SITE_URL MCP_URL OPERATOR_TOKEN CLIENT_TOKEN
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tools } from './sdk_tools.mjs';

const [wsURL, siteURL, mcpURL, operatorToken, clientToken] = process.argv.slice(2);
if (!clientToken) {
  console.error('usage: node --experimental-websocket mcp_ws_client.mjs WS_URL SITE_URL MCP_URL OPERATOR_TOKEN CLIENT_TOKEN');
  process.exit(2);
}
if (typeof WebSocket === 'undefined') {
  console.error('this node has no WebSocket: run it with --experimental-websocket (node 20) or node 22+');
  process.exit(2);
}
// A first browser call may start a worker and the browser on a busy machine.
const callOpts = { timeout: 120_000 };

async function connectWS(name, token) {
  const url = new URL(wsURL);
  url.searchParams.set('token', token);
  const transport = new WebSocketClientTransport(url);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// call returns what the model reads of one call: its text and isError.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, callOpts);
  return { text: res.content.filter((c) => c.type === 'text').map((c) => c.text).join(''), is_error: !!res.isError };
}

async function defaultSession(client) {
  const listed = await call(client, 'list_sessions', {});
  return JSON.parse(listed.text).sessions.find((s) => s.default)?.session_id ?? '';
}

const out = {};
const a = await connectWS('ws-a', operatorToken);
const b = await connectWS('ws-b', clientToken);
out.tools_ws = await tools(a);
out.tools_ws_client_token = await tools(b);

const overHTTP = new Client({ name: 'http', version: '1.0.0' });
const httpTransport = new StreamableHTTPClientTransport(new URL(mcpURL), { requestInit: { headers: { Authorization: `Bearer ${operatorToken}` } } });
await overHTTP.connect(httpTransport);
out.tools_http = await tools(overHTTP);
await httpTransport.terminateSession();
await overHTTP.close();

// Each sets its own value; the two first calls run at once.
[out.a_set, out.b_set] = await Promise.all([
  call(a, 'browser_navigate', { url: `${siteURL}/set.html?v=alpha` }),
  call(b, 'browser_navigate', { url: `${siteURL}/set.html?v=beta` }),
]);
out.a_read = await call(a, 'browser_navigate', { url: `${siteURL}/read.html` });
out.b_read = await call(b, 'browser_navigate', { url: `${siteURL}/read.html` });
out.a_session = await defaultSession(a);
out.b_session = await defaultSession(b);

// Phase one ends here: the Go test reads b's ref from b_read (answers are
// parsed in Go, where the answer's format is defined) and sends it back on
// stdin.
process.stdout.write(JSON.stringify(out) + '\n');
const bRef = await readLine();

// a may use neither b's session nor b's ref.
const tried = {};
tried.a_uses_b_session = await call(a, 'browser_snapshot', { session_id: out.b_session });
tried.a_closes_b_session = await call(a, 'close_session', { session_id: out.b_session });
tried.a_reads_b_ref = await call(a, 'get_content', { ref_id: bRef });
tried.b_reads_b_ref = await call(b, 'get_content', { ref_id: bRef });

// a leaves: closing the socket ends its MCP client and its sessions.
await a.close();
// b goes on.
tried.b_after = await call(b, 'browser_navigate', { url: `${siteURL}/read.html?after=1` });
tried.b_session_after = await defaultSession(b);
await b.close();

process.stdout.write(JSON.stringify(tried) + '\n', () => process.exit(0));

function readLine() {
  return new Promise((resolve, reject) => {
    let buf = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk) => {
      buf += chunk;
      const i = buf.indexOf('\n');
      if (i >= 0) {
        process.stdin.pause();
        resolve(buf.slice(0, i));
      }
    });
    process.stdin.on('end', () => reject(new Error('stdin ended before a line')));
  });
}
