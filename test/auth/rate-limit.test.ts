import t from 'tap';
import { leaseSizeFor } from '../../src/auth/lease-limiter.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner, probePath, startIdentityShell } from '../helpers/identity.js';
import { createTestRedisStore, sleepAtLeast, uniquePrefix } from '../helpers/store.js';

interface ErrorBody {
  code: string;
  reason?: string;
}

t.test('per-key limit: 60 pass, the 61st is a plain 429, across two instances sharing one Redis', async (t) => {
  const { sql } = await createTestDatabase(t);
  const prefix = uniquePrefix('ratelimit');
  const a = await startIdentityShell(t, { sql, store: await createTestRedisStore(t, prefix) });
  const b = await startIdentityShell(t, { sql, store: await createTestRedisStore(t, prefix) });
  const owner = await createOwner(sql);
  const other = await createOwner(sql);
  const call = (base: string, secret = owner.secret) =>
    fetch(`${base}${probePath('chat')}`, { headers: bearer(secret) });

  // 60 requests, alternating instances, sent together.
  const started = performance.now();
  const first = await Promise.all(Array.from({ length: 60 }, (_, i) => call(i % 2 === 0 ? a.url : b.url)));
  t.same(
    first.map((r) => r.status),
    Array(60).fill(200),
    'all 60 pass',
  );
  for (const res of first) {
    t.equal(res.headers.get('ratelimit-policy'), '60;w=60');
    t.match(res.headers.get('ratelimit'), /^limit=60, remaining=\d+, reset=\d+$/);
    await res.arrayBuffer();
  }
  const remaining = first.map((r) => Number(/remaining=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]));
  t.ok(
    remaining.includes(0) || performance.now() - started >= 1000,
    'the bucket is shared: one of the answers saw it empty',
  );

  // GCRA refills one request per second, so a slow machine may see one more pass per second elapsed: never
  // more (60 + whole seconds elapsed), and on any normal run exactly 60. Each round asks both instances at once, and
  // the bucket is shared when both refuse in the same round (sequential requests on a loaded machine could straddle a
  // refill, and the second one would pass for that reason alone).
  let extra = 0;
  let round = await Promise.all([call(b.url), call(a.url)]);
  while (round.some((r) => r.status === 200) && extra < 60) {
    extra += round.filter((r) => r.status === 200).length;
    for (const res of round) await res.arrayBuffer();
    round = await Promise.all([call(b.url), call(a.url)]);
  }
  const elapsedSeconds = Math.floor((performance.now() - started) / 1000);
  t.ok(extra <= elapsedSeconds, `no more than the refill let through (${extra} extra in ${elapsedSeconds} s)`);
  const [refused, again] = round;
  t.equal(refused.status, 429, 'then the next request is refused (the 61st on any normal run)');
  const body = (await refused.json()) as ErrorBody;
  t.equal(body.code, 'RATE_LIMITED');
  t.notOk('reason' in body, 'a plain 429 carries no reason');
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
    `Retry-After is whole seconds (${retryAfter})`,
  );
  t.match(refused.headers.get('ratelimit'), /^limit=60, remaining=0, reset=\d+$/, 'rate-limit headers on the 429 too');
  t.equal(refused.headers.get('ratelimit-policy'), '60;w=60');

  t.equal(again.status, 429, 'the other instance refuses too');
  await again.arrayBuffer();

  const otherKey = await call(a.url, other.secret);
  t.equal(otherKey.status, 200, 'the limit is per key');
  await otherKey.arrayBuffer();

  // Waiting exactly Retry-After is enough: it is never earlier than the moment a request passes.
  await sleepAtLeast(retryAfter * 1000);
  const later = await call(a.url);
  t.equal(later.status, 200, 'after Retry-After the key passes again');
  await later.arrayBuffer();
});

t.test('Redis unreachable: per-instance limits, logged, neither blocked nor unlimited', async (t) => {
  const { sql } = await createTestDatabase(t);
  const store = await createTestRedisStore(t);
  await store.close(); // every command now fails, as when Redis is down
  const shell = await startIdentityShell(t, { sql, store, env: { API_RATE_LIMIT_PER_MINUTE: '5' } });
  const owner = await createOwner(sql);
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${shell.url}${probePath('chat')}`, { headers: bearer(owner.secret) });
    statuses.push(res.status);
    if (res.status === 429) t.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After still given');
    await res.arrayBuffer();
  }
  t.same(statuses, [200, 200, 200, 200, 200, 429], 'traffic flows, and the limit still holds on this instance');
  const warnings = shell.logs.lines.filter(
    (l) => l['msg'] === 'rate limit store unreachable; using per-instance limits',
  );
  t.equal(warnings.length, 1, 'the fallback is logged once, not per request');
  t.equal(warnings[0]?.['level'], 40, 'as a warning');
});

t.test('lastUsedAt: written on use, at most once a minute per key across instances', async (t) => {
  const { sql } = await createTestDatabase(t);
  const prefix = uniquePrefix('lastused');
  const a = await startIdentityShell(t, { sql, store: await createTestRedisStore(t, prefix) });
  const b = await startIdentityShell(t, { sql, store: await createTestRedisStore(t, prefix) });
  const owner = await createOwner(sql);
  const lastUsed = async () =>
    (await sql<Array<{ lastUsedAt: Date | null }>>`select last_used_at from api_keys where id = ${owner.keyId}`)[0]
      ?.lastUsedAt ?? null;

  t.equal(await lastUsed(), null, 'never used yet');
  const res = await fetch(`${a.url}${probePath('chat')}`, { headers: bearer(owner.secret) });
  t.equal(res.status, 200);
  await res.arrayBuffer();
  const firstUse = await lastUsed();
  t.ok(firstUse instanceof Date, 'recorded on first use');

  for (let i = 0; i < 10; i++) {
    const r = await fetch(`${(i % 2 === 0 ? b : a).url}${probePath('chat')}`, { headers: bearer(owner.secret) });
    t.equal(r.status, 200);
    await r.arrayBuffer();
  }
  t.same(await lastUsed(), firstUse, 'further uses within the minute, on either instance, write nothing');
});

t.test(
  'leased limit across two instances: never more than one lease over, at most one lease each unused',
  async (t) => {
    const { sql } = await createTestDatabase(t);
    const prefix = uniquePrefix('ratelimit-lease');
    const env = { API_RATE_LIMIT_PER_MINUTE: '400' }; // leases of 4 requests
    const lease = leaseSizeFor(400);
    const a = await startIdentityShell(t, { sql, store: await createTestRedisStore(t, prefix), env });
    const b = await startIdentityShell(t, { sql, store: await createTestRedisStore(t, prefix), env });
    const owner = await createOwner(sql);
    const started = performance.now();
    let passed = 0;
    for (let burst = 0; burst < 25; burst++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(`${(i % 3 === 0 ? a : b).url}${probePath('chat')}`, { headers: bearer(owner.secret) }),
        ),
      );
      for (const res of answers) {
        if (res.status === 200) passed++;
        else t.equal(res.status, 429);
        await res.arrayBuffer();
      }
    }
    // GCRA refills 400 a minute: one request per 150 ms elapsed may pass on top.
    const refill = Math.floor((performance.now() - started) / 150);
    t.ok(
      passed <= 400 + lease + refill,
      `at most the limit, one lease and the refill pass (${passed}; refill ${refill})`,
    );
    t.ok(passed >= 400 - 2 * lease, `at most one lease per instance goes unused (${passed} of 500 passed)`);
  },
);
