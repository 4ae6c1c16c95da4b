import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { buildApp, type BuildOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createDeps } from '../../src/deps.js';
import { TEST_SECRET_KEY, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { bearer } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { deleteKeysWithPrefix, uniquePrefix } from '../helpers/store.js';

/** A short schedule for tests: at once, then 100 ms, 100 ms, 100 ms (four attempts). */
export const FAST_SCHEDULE = [0, 100, 100, 100];

export interface StartedApp extends TestApp {
  /** Stops this instance now (as a crash or a deploy would), before the test ends. */
  stop(): Promise<void>;
}

/**
 * The whole service like test/helpers/app.ts's startTestApp, plus webhook knobs (a short retry schedule, fast polling)
 * and private networks allowed (the receiver listens on 127.0.0.1) unless `env` says otherwise.
 */
export async function startWebhookApp(
  t: Test,
  options: {
    env?: Record<string, string>;
    database?: TestDatabase;
    redisPrefix?: string;
    webhooks?: BuildOptions['webhooks'];
    knowledge?: BuildOptions['knowledge'];
  } = {},
): Promise<StartedApp> {
  const database = options.database ?? (await createTestDatabase(t));
  const redisPrefix = options.redisPrefix ?? uniquePrefix('webhooks');
  const logs = captureLogger('info');
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: '4',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: redisPrefix,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-webhooks-')),
    SECRET_KEY: TEST_SECRET_KEY,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ...options.env,
  });
  const deps = await createDeps(config, logs.log);
  let app: ReturnType<typeof buildApp>;
  let port: number;
  try {
    app = buildApp(deps, {
      validateResponses: true,
      webhooks: { scheduleMs: FAST_SCHEDULE, pollMs: 50, ...options.webhooks },
      ...(options.knowledge ? { knowledge: options.knowledge } : {}),
    });
    port = await app.listen('127.0.0.1', 0);
  } catch (err) {
    await deps.close();
    throw err;
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close(0);
    await deps.close();
  };
  t.teardown(async () => {
    await stop();
    if (!options.redisPrefix) await deleteKeysWithPrefix(redisPrefix);
  });
  return { url: `http://127.0.0.1:${port}`, port, app, deps, config, database, redisPrefix, logs, stop };
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

/** Polls (real time) until `fn` returns a truthy value; fails after `timeoutMs`. */
export async function eventually<T>(
  fn: () => Promise<T> | T,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
