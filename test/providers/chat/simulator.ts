import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * An OpenAI-compatible Chat Completions server on loopback for tests: POST /v1/chat/completions with
 * `stream: true` answers SSE chunks like the real API. Each request takes the next scripted scenario
 * (the last one repeats), so a test can say "500, then a good stream".
 */
export type Scenario =
  | { kind: 'stream'; pieces: string[]; delayMs?: number; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { kind: 'status'; status: number; retryAfter?: string; body?: unknown }
  /** Waits before sending headers (a slow upstream). */
  | { kind: 'slow'; delayMs: number; then?: Scenario }
  /** Sends these pieces, then destroys the socket (a dropped connection mid-stream). */
  | { kind: 'drop'; pieces: string[] }
  /** Sends these pieces, then goes silent with the connection open. */
  | { kind: 'stall'; pieces: string[] }
  /** A complete-looking stream without the [DONE] marker. */
  | { kind: 'truncated'; pieces: string[] };

export interface SimulatorRequest {
  headers: IncomingMessage['headers'];
  body: { model?: string; messages?: Array<{ role: string; content: string }>; stream?: boolean; max_tokens?: number };
}

export interface ChatSimulator {
  baseUrl: string;
  requests: SimulatorRequest[];
  script(...scenarios: Scenario[]): void;
}

function chunk(text: string): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
}

export async function startChatSimulator(t: Test): Promise<ChatSimulator> {
  let scenarios: Scenario[] = [{ kind: 'stream', pieces: ['Hello', ' there'] }];
  const requests: SimulatorRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const wait = (ms: number) => new Promise<void>((resolve) => timers.add(setTimeout(resolve, ms)));

  async function play(scenario: Scenario, res: ServerResponse): Promise<void> {
    switch (scenario.kind) {
      case 'status':
        res.writeHead(scenario.status, {
          'content-type': 'application/json',
          ...(scenario.retryAfter ? { 'retry-after': scenario.retryAfter } : {}),
        });
        res.end(JSON.stringify(scenario.body ?? { error: { message: 'simulated failure', type: 'server_error' } }));
        return;
      case 'slow':
        await wait(scenario.delayMs);
        if (res.destroyed) return;
        return play(scenario.then ?? { kind: 'stream', pieces: ['late'] }, res);
      default: {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const piece of scenario.pieces) {
          res.write(chunk(piece));
          if (scenario.kind === 'stream' && scenario.delayMs) await wait(scenario.delayMs);
        }
        if (scenario.kind === 'drop') {
          await wait(20);
          res.socket?.destroy();
          return;
        }
        if (scenario.kind === 'stall') return; // keep the connection open, send nothing more
        if (scenario.kind === 'stream') {
          const usage = scenario.usage ?? { prompt_tokens: 42, completion_tokens: scenario.pieces.length };
          res.write(
            `data: ${JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion.chunk', choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`,
          );
          res.write('data: [DONE]\n\n');
        }
        res.end();
      }
    }
  }

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      let body: SimulatorRequest['body'] = {};
      try {
        body = JSON.parse(raw) as SimulatorRequest['body'];
      } catch {
        /* recorded as empty */
      }
      requests.push({ headers: req.headers, body });
      const scenario = scenarios.length > 1 ? scenarios.shift()! : scenarios[0]!;
      void play(scenario, res).catch(() => res.destroy());
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const timer of timers) clearTimeout(timer);
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script(...next) {
      scenarios = next;
    },
  };
}
