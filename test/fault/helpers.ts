import type { Test } from 'tap';
import type { VoiceCapabilityOptions } from '../../src/voice/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { startFaultProxy, targetOf, type FaultProxy } from '../helpers/fault-proxy.js';
import { startRedisProcess, type RedisProcess } from '../helpers/redis-process.js';

/**
 * One Parley instance whose dependencies can fail: its own redis-server behind a fault proxy, and a database of
 * its own on the shared PostgreSQL behind another. Short deadlines, so a fault shows in seconds.
 */
export interface FaultRig {
  app: TestApp;
  redis: RedisProcess;
  redisProxy: FaultProxy;
  pgProxy: FaultProxy;
  database: TestDatabase;
  /** The env the instance runs with (a second process of the same deployment takes it too). */
  env: Record<string, string>;
}

export const STORE_DEADLINE_MS = 500;
export const SQL_DEADLINE_MS = 1500;

export async function startFaultRig(
  t: Test,
  options: { env?: Record<string, string>; voice?: VoiceCapabilityOptions } = {},
): Promise<FaultRig> {
  const redis = await startRedisProcess(t);
  const redisProxy = await startFaultProxy(targetOf(redis.url, 6379), t);
  const database = await createTestDatabase(t);
  const pgProxy = await startFaultProxy(targetOf(TEST_DATABASE_URL, 5432), t);
  const env = {
    REDIS_URL: redisProxy.urlFor(redis.url),
    DATABASE_URL: pgProxy.urlFor(database.url),
    REDIS_COMMAND_TIMEOUT_MS: String(STORE_DEADLINE_MS),
    DATABASE_QUERY_TIMEOUT_MS: String(SQL_DEADLINE_MS),
    ...options.env,
  };
  const app = await startTestApp(t, { database, env, ...(options.voice ? { voice: options.voice } : {}) });
  return { app, redis, redisProxy, pgProxy, database, env };
}

export interface Timed {
  status: number;
  body: any;
  headers: Headers;
  ms: number;
}

/** One request with a hard client-side limit (a hang shows as status 0 instead of stalling the test). */
export async function timedRequest(
  url: string,
  init: RequestInit & { json?: unknown } = {},
  limitMs = 15_000,
): Promise<Timed> {
  const started = performance.now();
  const { json, ...rest } = init;
  try {
    const res = await fetch(url, {
      ...rest,
      ...(json !== undefined
        ? {
            method: rest.method ?? 'POST',
            body: JSON.stringify(json),
            headers: { 'content-type': 'application/json', ...(rest.headers as Record<string, string> | undefined) },
          }
        : {}),
      signal: AbortSignal.timeout(limitMs),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      /* SSE or plain text */
    }
    return { status: res.status, body, headers: res.headers, ms: performance.now() - started };
  } catch {
    return { status: 0, body: undefined, headers: new Headers(), ms: performance.now() - started };
  }
}
