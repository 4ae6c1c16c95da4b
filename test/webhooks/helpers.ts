import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import type { BuildOptions } from '../../src/app.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestDatabase } from '../helpers/db.js';
import { bearer } from '../helpers/identity.js';
import { waitFor } from '../helpers/wait.js';

/** A short schedule for tests: at once, then 100 ms, 100 ms, 100 ms (four attempts). */
export const FAST_SCHEDULE = [0, 100, 100, 100];

/**
 * The whole service (startTestApp) with webhook knobs for tests (a short retry schedule, fast polling) and private
 * networks allowed (the receiver listens on 127.0.0.1) unless `env` says otherwise.
 */
export function startWebhookApp(
  t: Test,
  options: {
    env?: Record<string, string>;
    database?: TestDatabase;
    redisPrefix?: string;
    webhooks?: BuildOptions['webhooks'];
    knowledge?: BuildOptions['knowledge'];
  } = {},
): Promise<TestApp> {
  return startTestApp(t, {
    ...options,
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...options.env },
    webhooks: { scheduleMs: FAST_SCHEDULE, pollMs: 50, ...options.webhooks },
  });
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** What the next requests are answered (default 200). */
  answer: (request: { headers: IncomingHttpHeaders; body: string }) => number;
  /** Delay before answering (ms), to make requests overlap. */
  delayMs: number;
  inFlight: number;
  maxInFlight: number;
}

/** An integrator's endpoint on 127.0.0.1:0 that records every POST and answers `answer(...)`. Closed at teardown. */
export async function startReceiver(t: Test): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => 200,
    delayMs: 0,
    inFlight: 0,
    maxInFlight: 0,
  };
  const server = createServer((req, res) => {
    receiver.inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const status = receiver.answer({ headers: req.headers, body });
      setTimeout(() => {
        receiver.received.push({ headers: req.headers, body, status });
        receiver.inFlight--;
        res.statusCode = status;
        res.end('ok');
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return receiver;
}

export async function api(
  baseUrl: string,
  method: string,
  path: string,
  secret: string,
  body?: unknown,
): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...bearer(secret), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), text };
}

/** Polls until the value is truthy (bounded): test/helpers/wait.ts' waitFor, by the name these tests know. */
export { waitFor as eventually };
