// Ends one MCP session of proxy-server's /mcp twice with the official MCP
// TypeScript SDK, for TestEndedMCPSessionWithOfficialSDK: a second transport
// naming the first's Mcp-Session-Id ends it (DELETE), then the first's own
// terminateSession finds it gone. It prints one JSON object on stdout; the
// Go test checks it.
//
//   node mcp_http_end_twice.mjs MCP_URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mcpURL] = process.argv.slice(2);
if (!mcpURL) {
  console.error('usage: node mcp_http_end_twice.mjs MCP_URL');
  process.exit(2);
}

// end terminates the transport's session and reports how that went.
async function end(transport) {
  try {
    await transport.terminateSession();
    return { ok: true };
  } catch (e) {
    return { ok: false, status: e.code ?? null, message: String(e.message) };
  }
}

const transport = new StreamableHTTPClientTransport(new URL(mcpURL));
const client = new Client({ name: 'end-twice', version: '1.0.0' });
await client.connect(transport);
const id = transport.sessionId;
const other = new StreamableHTTPClientTransport(new URL(mcpURL), { sessionId: id });
const out = { mcp_session_id: id, first: await end(other), second: await end(transport) };
await client.close();
console.log(JSON.stringify(out));
