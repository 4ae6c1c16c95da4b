import type { Test } from 'tap';
import type { SharedStore } from '../../src/store/types.js';

/** One SharedStore implementation under test. */
export interface ContractTarget {
  /** A fresh, empty store, closed (and cleaned) at the test's teardown. */
  create(t: Test): Promise<SharedStore>;
  /** Lets at least `ms` pass on the store's clock (real sleep, or advancing an injected clock). */
  advance(ms: number): Promise<void>;
  /** The clock is the test's to move: boundaries can be asserted to the millisecond. */
  exactClock: boolean;
}

/**
 * The one contract every SharedStore passes (docs/house-rules.md rule 7). Small periods keep it fast on real
 * clocks: TTLs of 150 ms, and a rate limit of 5 per 500 ms (one request refills every 100 ms; 5 per 5 s where the
 * clock is real and a loaded machine could take a refill's time between two requests).
 */
export function storeContract(t: Test, target: ContractTarget): void {
  t.test('get, set, onlyIfAbsent, delete', async (t) => {
    const store = await target.create(t);
    t.equal(await store.get('a'), null, 'absent key reads null');
    t.equal(await store.set('a', '1'), true);
    t.equal(await store.get('a'), '1');
    t.equal(await store.set('a', '2'), true, 'plain set overwrites');
    t.equal(await store.set('a', '3', { onlyIfAbsent: true }), false, 'onlyIfAbsent refuses an existing key');
    t.equal(await store.get('a'), '2', 'and leaves it alone');
    t.equal(await store.set('b', 'x', { onlyIfAbsent: true }), true, 'onlyIfAbsent sets an absent key');
    t.equal(await store.get('b'), 'x');
    t.equal(await store.delete('a'), true, 'delete reports a removed key');
    t.equal(await store.delete('a'), false, 'and false when nothing was there');
    t.equal(await store.get('a'), null);
  });

  t.test('ttl: expiry, ttlMs, plain set clears it', async (t) => {
    const store = await target.create(t);
    await store.set('k', 'v', { ttlMs: 150 });
    const ttl = await store.ttlMs('k');
    t.ok(ttl !== null && ttl > 0 && ttl <= 150, `ttlMs within (0, 150], got ${ttl}`);
    t.equal(await store.set('k2', 'v', { ttlMs: 150, onlyIfAbsent: true }), true);
    t.equal(await store.set('k2', 'w', { ttlMs: 150, onlyIfAbsent: true }), false);
    await target.advance(200);
    t.equal(await store.get('k'), null, 'expired key reads null');
    t.equal(await store.ttlMs('k'), null, 'expired key has no ttl');
    t.equal(await store.set('k2', 'again', { onlyIfAbsent: true }), true, 'an expired key counts as absent');
    t.equal(await store.ttlMs('k2'), null, 'no ttl given: none');
    t.equal(await store.ttlMs('missing'), null);
    await store.set('k3', 'v', { ttlMs: 10_000 });
    await store.set('k3', 'w');
    t.equal(await store.ttlMs('k3'), null, 'a plain set removes the old expiry (SET semantics)');
    await t.rejects(store.set('k4', 'v', { ttlMs: 0 }), RangeError, 'ttlMs 0 is a caller bug');
  });

  t.test('compareAndSet from absent and from a value', async (t) => {
    const store = await target.create(t);
    t.equal(await store.compareAndSet('o', null, 'gen1'), true, 'absent -> value');
    t.equal(await store.compareAndSet('o', null, 'gen1b'), false, 'expected absent, but present');
    t.equal(await store.compareAndSet('o', 'nope', 'gen2'), false, 'wrong expected value');
    t.equal(await store.get('o'), 'gen1');
    t.equal(await store.compareAndSet('o', 'gen1', 'gen2', 150), true, 'matching value is replaced');
    t.equal(await store.get('o'), 'gen2');
    const ttl = await store.ttlMs('o');
    t.ok(ttl !== null && ttl <= 150, 'ttlMs applies to the new value');
    t.equal(await store.compareAndSet('o', 'gen2', 'gen3'), true);
    t.equal(await store.ttlMs('o'), null, 'without ttlMs the new value does not expire');
    await store.compareAndSet('o', 'gen3', 'gen4', 150);
    await target.advance(200);
    t.equal(await store.compareAndSet('o', 'gen4', 'gen5'), false, 'an expired value no longer matches');
    t.equal(await store.compareAndSet('o', null, 'fresh'), true, 'an expired key is absent');
  });

  t.test('lost races: exactly one of many concurrent compareAndSet wins', async (t) => {
    const store = await target.create(t);
    const fromAbsent = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.compareAndSet('race', null, `w${i}`)),
    );
    const winners = fromAbsent.flatMap((won, i) => (won ? [i] : []));
    t.equal(winners.length, 1, 'one winner from absent');
    t.equal(await store.get('race'), `w${winners[0]}`, 'the winner wrote the value');

    const current = `w${winners[0]}`;
    const fromValue = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.compareAndSet('race', current, `v${i}`)),
    );
    t.equal(fromValue.filter(Boolean).length, 1, 'one winner from a value');
  });

  t.test('deleteIfEquals', async (t) => {
    const store = await target.create(t);
    t.equal(await store.deleteIfEquals('d', 'x'), false, 'absent key');
    await store.set('d', 'mine');
    t.equal(await store.deleteIfEquals('d', 'theirs'), false, 'another value is kept');
    t.equal(await store.get('d'), 'mine');
    t.equal(await store.deleteIfEquals('d', 'mine'), true, 'own value is deleted');
    t.equal(await store.get('d'), null);
    await store.set('d2', 'v');
    const results = await Promise.all(Array.from({ length: 20 }, () => store.deleteIfEquals('d2', 'v')));
    t.equal(results.filter(Boolean).length, 1, 'concurrent deletes: exactly one reports it');
  });

  t.test('increment: TTL on create only, atomic, integers only', async (t) => {
    const store = await target.create(t);
    t.equal(await store.increment('n', 3, 300), 3, 'creates at 0');
    t.equal(await store.increment('n', -1, 300), 2);
    const first = await store.ttlMs('n');
    t.ok(first !== null && first > 0 && first <= 300, `TTL set on create, got ${first}`);
    await target.advance(150);
    await store.increment('n', 1, 300);
    const later = await store.ttlMs('n');
    t.ok(later !== null && later <= 300 - 150, `TTL not extended by later increments, got ${later}`);
    await target.advance(200);
    t.equal(await store.increment('n', 5, 300), 5, 'after expiry it starts again');

    const values = await Promise.all(Array.from({ length: 50 }, () => store.increment('c', 1, 10_000)));
    t.same(
      [...values].sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i + 1),
      'every value handed out once',
    );

    await store.set('text', 'abc');
    await t.rejects(store.increment('text', 1, 1000), 'a non-integer value refuses');
    await t.rejects(store.increment('n', 1.5, 1000), RangeError, 'a fractional step refuses');
    await t.rejects(store.increment('n', 1, 0), RangeError);
  });

  t.test('rateLimit (GCRA): a burst of exactly limit, then retryAfterMs lets exactly one through', async (t) => {
    const store = await target.create(t);
    const limit = 5;
    // On a real clock one request refills every second, and the burst is sent at once: a loaded machine that takes
    // longer than one refill between two requests would otherwise see a request pass that the contract refuses.
    const periodMs = target.exactClock ? 500 : 5000;
    const burst = await Promise.all(Array.from({ length: limit + 1 }, () => store.rateLimit('rl', limit, periodMs)));
    for (const [i, r] of burst.slice(0, limit).entries()) {
      t.equal(r.allowed, true, `request ${i + 1} passes`);
      t.equal(r.limit, limit);
      t.equal(r.remaining, limit - 1 - i, 'remaining counts down');
      t.equal(r.retryAfterMs, 0);
    }
    const refused = burst[limit]!;
    t.equal(refused.allowed, false, 'request limit+1 is refused');
    t.equal(refused.remaining, 0);
    t.ok(
      refused.retryAfterMs > 0 && refused.retryAfterMs <= periodMs / limit,
      `retryAfterMs within one interval, got ${refused.retryAfterMs}`,
    );
    t.ok(
      refused.resetMs > periodMs - periodMs / limit && refused.resetMs <= periodMs,
      `resetMs ~ a full period, got ${refused.resetMs}`,
    );

    if (target.exactClock) {
      await target.advance(refused.retryAfterMs - 1);
      t.equal((await store.rateLimit('rl', limit, periodMs)).allowed, false, 'one ms early is still refused');
      await target.advance(1);
    } else {
      await target.advance(refused.retryAfterMs);
    }
    const [after, next] = await Promise.all([
      store.rateLimit('rl', limit, periodMs),
      store.rateLimit('rl', limit, periodMs),
    ]);
    t.equal(after.allowed, true, 'after retryAfterMs one passes');
    t.equal(after.remaining, 0);
    t.equal(next.allowed, false, 'and only one');

    t.equal((await store.rateLimit('other', limit, periodMs)).remaining, limit - 1, 'keys have separate buckets');
  });

  t.test('rateLimit: concurrent callers never exceed the burst; the bucket refills', async (t) => {
    const store = await target.create(t);
    const results = await Promise.all(Array.from({ length: 30 }, () => store.rateLimit('burst', 5, 500)));
    t.equal(results.filter((r) => r.allowed).length, 5, 'exactly limit of 30 concurrent requests pass');
    const slowest = Math.max(...results.map((r) => r.resetMs));
    t.ok(slowest <= 500);
    await target.advance(510);
    const refreshed = await store.rateLimit('burst', 5, 500);
    t.equal(refreshed.allowed, true);
    t.equal(refreshed.remaining, 4, 'a full period later the bucket is full again');
    t.equal((await store.ttlMs('burst')) !== null, true, 'the bucket key expires on its own');
  });

  t.test('rateLimit: cost', async (t) => {
    const store = await target.create(t);
    const first = await store.rateLimit('cost', 5, 500, 3);
    t.equal(first.allowed, true);
    t.equal(first.remaining, 2);
    const second = await store.rateLimit('cost', 5, 500, 3);
    t.equal(second.allowed, false, 'cost above what is left is refused');
    t.equal(second.remaining, 2, 'refusals do not consume');
    t.ok(second.retryAfterMs > 0 && second.retryAfterMs <= 100, `one interval until 3 fit, got ${second.retryAfterMs}`);
    const peek = await store.rateLimit('cost', 5, 500, 0);
    t.equal(peek.allowed, true, 'cost 0 only reads');
    t.equal(peek.remaining, 2);
    t.equal((await store.rateLimit('cost', 5, 500, 2)).remaining, 0);
    await t.rejects(store.rateLimit('cost', 5, 500, 6), RangeError, 'cost above limit could never pass');
    await t.rejects(store.rateLimit('cost', 0, 500), RangeError);
    await t.rejects(store.rateLimit('cost', 5, 0), RangeError);
  });

  t.test('ping, and close is final and idempotent', async (t) => {
    const store = await target.create(t);
    await t.resolves(store.ping());
    await store.close();
    await store.close();
    await t.rejects(store.ping(), 'a closed store does not answer');
    await t.rejects(store.get('x'));
  });
}
