import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCRequest, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { parseArgs } from 'util';

/**
 * MCP over stdio for desktop clients: `npm run mcp -- --key crm_live_…` (or CRM_API_KEY), against the
 * gateway at --url (or CRM_URL, default http://127.0.0.1:3000). It relays each message to the gateway's
 * POST /mcp, so the key, scopes, rate limits and every rule are the HTTP API's own. Stdout carries the
 * protocol only; diagnostics go to stderr and never include the key.
 */
const USAGE = 'usage: npm run mcp -- --key <api key> [--url http://127.0.0.1:3000]';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { key: { type: 'string' }, url: { type: 'string' } } });
  const key = values.key ?? process.env.CRM_API_KEY;
  if (!key) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const base = values.url ?? process.env.CRM_URL ?? 'http://127.0.0.1:3000';
  const upstream = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { 'X-Api-Key': key } } });
  const local = new StdioServerTransport();

  local.onmessage = (message: JSONRPCMessage) => {
    upstream.send(message).catch((err: Error) => {
      process.stderr.write(`crm mcp: ${err.message}\n`);
      // Answer the request ourselves, so the client is not left waiting for a reply that cannot come.
      if (isJSONRPCRequest(message)) void local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: err.message } });
    });
  };
  upstream.onmessage = (message: JSONRPCMessage) => void local.send(message);
  upstream.onerror = (err: Error) => process.stderr.write(`crm mcp: ${err.message}\n`);
  local.onclose = () => void upstream.close().then(() => process.exit(0));

  await upstream.start();
  await local.start();
}

void main();
