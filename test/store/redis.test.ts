import t from 'tap';
import { connectRedisStore } from '../../src/store/redis.js';
import { createStore } from '../../src/store/index.js';
import { captureLogger } from '../helpers/log.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { createTestRedisStore, sleepAtLeast, uniquePrefix } from '../helpers/store.js';
import { storeContract } from './contract.js';

t.test('contract', async (t) => {
  storeContract(t, { exactClock: false, create: (t) => createTestRedisStore(t), advance: sleepAtLeast });
});

t.test('two instances sharing one Redis share the bucket and the keys', async (t) => {
  const prefix = uniquePrefix('shared');
  const a = await createTestRedisStore(t, prefix);
  const b = await createTestRedisStore(t, prefix);
  // 5 per 5 s: one refill a second, far longer than a loaded machine takes between two of these requests.
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).rateLimit('bucket', 5, 5000)),
  );
  t.equal(results.filter((r) => r.allowed).length, 5, 'limit holds across instances');
  const refused = await a.rateLimit('bucket', 5, 5000);
  t.equal(refused.allowed, false);
  await sleepAtLeast(refused.retryAfterMs);
  const [other, again] = await Promise.all([b.rateLimit('bucket', 5, 5000), a.rateLimit('bucket', 5, 5000)]);
  t.equal(other.allowed, true, 'the other instance sees the refill at the same moment');
  t.equal(again.allowed, false);

  t.equal(await a.compareAndSet('owner', null, 'a'), true);
  t.equal(await b.compareAndSet('owner', null, 'b'), false, 'fencing works across instances');
});

t.test('keys are prefixed; another prefix does not see them', async (t) => {
  const a = await createTestRedisStore(t);
  const b = await createTestRedisStore(t);
  await a.set('k', 'v');
  t.equal(await b.get('k'), null);
});

t.test('unreachable Redis fails clearly at boot and leaves nothing running', async (t) => {
  const logs = captureLogger();
  const url = 'redis://:hunter2-secret@127.0.0.1:1';
  const error = await connectRedisStore({ url, prefix: uniquePrefix(), log: logs.log, connectTimeoutMs: 1000 }).then(
    () => null,
    (e: unknown) => e as Error,
  );
  t.ok(error, 'rejects');
  t.match(error?.message, /Cannot reach Redis at 127\.0\.0\.1:1/);
  t.notMatch(error?.message ?? '', /hunter2/, 'no password in the error');
  t.notMatch(logs.text(), /hunter2/, 'no password in the logs');
});

t.test('createStore picks Redis with a URL, memory without', async (t) => {
  const { log } = captureLogger();
  const redis = await createStore({ redisUrl: TEST_REDIS_URL, prefix: uniquePrefix(), log });
  t.teardown(() => redis.close());
  t.equal(redis.kind, 'redis');
  await t.resolves(redis.ping());
  const memory = await createStore({ prefix: 'x:', log });
  t.teardown(() => memory.close());
  t.equal(memory.kind, 'memory');
});
