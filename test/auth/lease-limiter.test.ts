import t from 'tap';
import { LEASE_TTL_MS, LeasedRateLimiter, leaseSizeFor } from '../../src/auth/lease-limiter.js';
import { MemoryStore } from '../../src/store/index.js';

/** The shared bucket, as Redis would hold it, on a clock the test moves (frozen: no refill while counting). */
function sharedBucket(t: { teardown(fn: () => unknown): void }) {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  t.teardown(() => store.close());
  let calls = 0;
  const source = {
    limit: (key: string, limit: number, periodMs: number, cost: number) => {
      calls++;
      return store.rateLimit(key, limit, periodMs, cost);
    },
  };
  const instance = () => new LeasedRateLimiter(source, () => now);
  return { instance, advance: (ms: number) => (now += ms), calls: () => calls };
}

async function allowed(limiter: LeasedRateLimiter, limit: number, periodMs = 60_000): Promise<boolean> {
  return (await limiter.limit('k', limit, periodMs)).allowed;
}

t.test('lease size: one below 200 a minute (exact), 1% of the limit up to 100', async (t) => {
  t.equal(leaseSizeFor(60), 1);
  t.equal(leaseSizeFor(199), 1);
  t.equal(leaseSizeFor(1000), 10);
  t.equal(leaseSizeFor(1_000_000), 100);
});

t.test('two instances never pass more than the limit, and at most one lease each goes unused', async (t) => {
  const bucket = sharedBucket(t);
  const a = bucket.instance();
  const b = bucket.instance();
  const limit = 1000;
  const lease = leaseSizeFor(limit);
  // Uneven, bursty traffic: 3 requests on A for every 2 on B, in concurrent bursts of 25.
  let passed = 0;
  for (let round = 0; round < 60; round++) {
    const burst = await Promise.all(Array.from({ length: 25 }, (_, i) => allowed(i % 5 < 3 ? a : b, limit)));
    passed += burst.filter(Boolean).length;
  }
  t.ok(passed <= limit + lease, `at most the limit plus one lease (${passed} of 1500 passed, limit ${limit})`);
  t.ok(passed >= limit - 2 * lease, `at most one unspent lease per instance is lost (${passed} passed)`);
  t.ok(
    bucket.calls() <= Math.ceil(limit / lease) + 2 * 60,
    `about one shared-store call per lease, not per request (${bucket.calls()})`,
  );

  // Exhausted: both refuse without asking the store again until the bucket's Retry-After.
  const before = bucket.calls();
  const refusal = await a.limit('k', limit, 60_000);
  t.equal(refusal.allowed, false);
  t.ok(refusal.retryAfterMs >= 1 && refusal.retryAfterMs <= 60_000, `retry after ${refusal.retryAfterMs} ms`);
  t.equal((await b.limit('k', limit, 60_000)).allowed, false);
  await a.limit('k', limit, 60_000);
  t.ok(bucket.calls() - before <= 2, 'refusals are answered locally');

  // After Retry-After one request passes again, even though a whole lease is not available yet.
  bucket.advance(refusal.retryAfterMs);
  t.equal(await allowed(a, limit), true, 'the refill is usable after Retry-After');
});

t.test('a lease is spent only by its instance and only within its TTL', async (t) => {
  const limit = 200; // leases of 2
  const hour = 3_600_000; // one token refills every 18 s: none during this test
  for (const expire of [false, true]) {
    const bucket = sharedBucket(t);
    const a = bucket.instance();
    const b = bucket.instance();
    t.equal(await allowed(a, limit, hour), true); // A leases 2 and spends 1
    if (expire) bucket.advance(LEASE_TTL_MS);
    let passedOnB = 0;
    while (await allowed(b, limit, hour)) passedOnB++;
    t.equal(passedOnB, limit - 2, "B gets everything but A's lease");
    t.equal(
      await allowed(a, limit, hour),
      !expire,
      expire ? "A's unspent token expired with its lease" : 'A spends its own lease',
    );
  }
});

t.test('limits under 200 use no lease: exactly the shared bucket, request by request', async (t) => {
  const bucket = sharedBucket(t);
  const a = bucket.instance();
  const b = bucket.instance();
  const results = await Promise.all(Array.from({ length: 61 }, (_, i) => allowed(i % 2 === 0 ? a : b, 60)));
  t.equal(results.filter(Boolean).length, 60);
  t.equal(bucket.calls(), 61);
});
