/**
 * The owner's side of a server tool: an HTTP server that answers Parley's signed tool calls. It verifies each
 * request with the assistant's tool secret (the SDK's toolReceiver), runs the handler the call names and answers
 * `{ result }` (or `{ error }`). Deduplicate on `toolCallId` (the `webhook-id`) for tools with side effects.
 *
 *   PARLEY_TOOL_SECRET=whsec_... npx tsx examples/tool-receiver.ts [--port 8787]
 *
 * Then add the tool to an assistant (the answer of the first tool carries the secret):
 *
 *   curl -X POST $PARLEY/api/v1/assistants/asst_.../tools -H "Authorization: Bearer $KEY" \
 *     -H 'content-type: application/json' -d '{"name":"order_status","description":"Status of an order",
 *     "parameters":{"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]},
 *     "url":"https://tools.example.com/tools","examples":["status of order {orderId}"]}'
 *
 * A receiver on this machine (http://127.0.0.1:8787/tools) needs WEBHOOK_ALLOW_PRIVATE_NETWORKS=true on the server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { toolReceiver, type ToolHandlers } from '../sdk/src/index.js';

/** The example's tools: an order lookup from a tiny in-memory table. */
export const exampleHandlers: ToolHandlers = {
  order_status: (args) => {
    const orders: Record<string, { status: string; eta: string }> = {
      '12345': { status: 'shipped', eta: '2026-12-01' },
      '67890': { status: 'processing', eta: '2026-12-04' },
    };
    const order = orders[String(args['orderId'])];
    if (!order) throw new Error(`no order ${String(args['orderId'])}`);
    return order;
  },
};

/** Starts the receiver on `port` (0: any free port); resolves with its URL and the server. */
export async function startToolReceiver(
  secret: string,
  options: { port?: number; host?: string; handlers?: ToolHandlers } = {},
): Promise<{ url: string; server: Server }> {
  const receive = toolReceiver(secret, options.handlers ?? exampleHandlers);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Verify the raw bytes as received: re-serialised JSON would not match the signature.
      void receive(req.headers, Buffer.concat(chunks)).then(({ status, body }) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(options.port ?? 8787, host, resolve));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}/tools`, server };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env['PARLEY_TOOL_SECRET'];
  if (!secret) {
    process.stderr.write('Set PARLEY_TOOL_SECRET to the whsec_ secret of your assistant’s tools.\n');
    process.exit(1);
  }
  const portFlag = process.argv.indexOf('--port');
  const port = portFlag >= 0 ? Number(process.argv[portFlag + 1]) : 8787;
  const { url } = await startToolReceiver(secret, { port });
  process.stdout.write(`Tool receiver listening on ${url}\n`);
}
