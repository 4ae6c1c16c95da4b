import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Test } from 'tap';
import { Redis } from 'ioredis';
import { connectRedisStore, type RedisStore } from '../../src/store/redis.js';
import { TEST_REDIS_URL } from './env.js';

/** A key prefix no other test (or test run) uses: tests share one Redis. */
export function uniquePrefix(label = 'test'): string {
  return `parley-test:${label}:${Date.now().toString(36)}-${randomBytes(4).toString('hex')}:`;
}

/**
 * A RedisStore on the test Redis under a unique prefix (or the one given, to share a bucket between two
 * stores). At teardown the store is closed and every key under the prefix deleted.
 */
export async function createTestRedisStore(t: Test, prefix: string = uniquePrefix()): Promise<RedisStore> {
  const store = await connectRedisStore({ url: TEST_REDIS_URL, prefix });
  t.teardown(async () => {
    await store.close();
    await deleteKeysWithPrefix(prefix);
  });
  return store;
}

/** Deletes every key under `prefix` (SCAN, not KEYS: never block a shared Redis). */
export async function deleteKeysWithPrefix(prefix: string): Promise<void> {
  // A client without keyPrefix: SCAN's MATCH pattern is not prefixed by ioredis, but DEL's keys would be.
  const raw = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await raw.connect();
    let cursor = '0';
    do {
      const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await raw.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    raw.disconnect();
  }
}

/** Waits at least `ms` by the monotonic clock (timers may fire a little early against it). */
export async function sleepAtLeast(ms: number): Promise<void> {
  const until = performance.now() + ms;
  for (let left = ms; left > 0; left = until - performance.now()) await delay(Math.ceil(left));
}
