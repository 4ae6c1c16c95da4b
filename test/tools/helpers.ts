import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Test } from 'tap';

export { api, eventually } from '../webhooks/helpers.js';

export interface ToolRequest {
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

export interface ToolReceiver {
  url: string;
  received: ToolRequest[];
  /** How each request is answered (default: 200 `{ result: { status: 'shipped' } }`). */
  respond: (request: ToolRequest, res: ServerResponse) => void;
}

/** The owner's tool server: a real HTTP server on 127.0.0.1:0 recording every request. Closed at teardown. */
export async function startToolReceiver(t: Test): Promise<ToolReceiver> {
  const receiver: ToolReceiver = {
    url: '',
    received: [],
    respond: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: { status: 'shipped', eta: '2026-12-01' } }));
    },
  };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const request = { headers: req.headers, body, json };
      receiver.received.push(request);
      receiver.respond(request, res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tools`;
  t.teardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return receiver;
}

/** An order_status tool as an owner would define it. */
export function orderStatusTool(url: string, extra: Record<string, unknown> = {}) {
  return {
    name: 'order_status',
    description: 'Looks up the status of an order by its number.',
    parameters: {
      type: 'object',
      properties: { orderId: { type: 'string', description: 'The order number', maxLength: 20 } },
      required: ['orderId'],
    },
    url,
    examples: ['status of order {orderId}', 'where is order {orderId}'],
    messages: { start: 'Checking your order...', failed: 'I could not reach the order system.' },
    ...extra,
  };
}

export interface ModelRequest {
  messages: Array<Record<string, any>>;
  tools?: Array<Record<string, any>>;
}

/**
 * An OpenAI-compatible Chat Completions stub on loopback: each request takes the next scripted reply (the last one
 * repeats): `{ text }` streams text, `{ calls }` streams tool calls (their arguments in two pieces, as models do).
 */
export async function startModelStub(t: Test) {
  type Reply = { text: string } | { calls: Array<{ name: string; arguments: string }> };
  let script: Reply[] = [{ text: 'Hello.' }];
  const requests: ModelRequest[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      requests.push(JSON.parse(raw) as ModelRequest);
      const reply = script.length > 1 ? script.shift()! : script[0]!;
      const chunk = (delta: unknown) =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if ('text' in reply) res.write(chunk({ content: reply.text }));
      else
        reply.calls.forEach((call, index) => {
          const half = Math.floor(call.arguments.length / 2);
          res.write(
            chunk({
              tool_calls: [
                {
                  index,
                  id: `call_${index}`,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments.slice(0, half) },
                },
              ],
            }),
          );
          res.write(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(half) } }] }));
        });
      res.write(
        `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    script(...replies: Reply[]) {
      script = replies;
    },
  };
}
