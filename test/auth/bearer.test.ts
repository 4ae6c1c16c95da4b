import t from 'tap';
import { SCOPES, setAccountStatus } from '../../src/auth/index.js';
import { createTestDatabase } from '../helpers/db.js';
import {
  bearer,
  checkBearerGuard,
  createOwner,
  dashboardHeaders,
  login,
  probePath,
  startIdentityShell,
} from '../helpers/identity.js';
import { createTestRedisStore, uniquePrefix } from '../helpers/store.js';
import { sleep } from '../helpers/wait.js';

interface ErrorBody {
  code: string;
  reason?: string;
  requestId: string;
}

t.test('bearer: 401 for a missing or bad key, with a code', async (t) => {
  const { sql } = await createTestDatabase(t);
  const store = await createTestRedisStore(t);
  const { url } = await startIdentityShell(t, { sql, store });
  const owner = await createOwner(sql);
  const path = `${url}${probePath('chat')}`;

  const cases: Array<[string, Record<string, string>, string]> = [
    ['no header', {}, 'AUTH_MISSING_KEY'],
    ['empty header', { authorization: '' }, 'AUTH_MISSING_KEY'],
    ['Basic scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 'AUTH_INVALID_KEY'],
    ['scheme without token', { authorization: 'Bearer' }, 'AUTH_INVALID_KEY'],
    ['two tokens', { authorization: `Bearer ${owner.secret} ${owner.secret}` }, 'AUTH_INVALID_KEY'],
    ['not a key', { authorization: 'Bearer hello' }, 'AUTH_INVALID_KEY'],
    ['SQL-looking', { authorization: "Bearer sk_live_' OR '1'='1' --" }, 'AUTH_INVALID_KEY'],
    [
      'bad checksum',
      { authorization: `Bearer ${owner.secret.slice(0, -1)}${owner.secret.endsWith('0') ? '1' : '0'}` },
      'AUTH_INVALID_KEY',
    ],
    ['oversized', { authorization: `Bearer sk_live_${'a'.repeat(1000)}` }, 'AUTH_INVALID_KEY'],
  ];
  for (const [label, headers, code] of cases) {
    const res = await fetch(path, { headers });
    t.equal(res.status, 401, `${label}: 401`);
    t.match((await res.json()) as ErrorBody, { code, requestId: String }, `${label}: ${code}`);
    t.equal(res.headers.get('ratelimit-policy'), '60;w=60', `${label}: the policy is announced on every bearer answer`);
  }

  // A well-formed key (valid checksum) that was never issued.
  const { generateSecret } = await import('../../src/auth/api-key-secret.js');
  const res = await fetch(path, { headers: bearer(generateSecret().secret) });
  t.equal(res.status, 401);
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_INVALID_KEY');

  const ok = await fetch(path, { headers: { authorization: `bearer   ${owner.secret}` } });
  t.equal(ok.status, 200, 'the scheme is case-insensitive (RFC 9110)');
  t.match(await ok.json(), {
    principal: { kind: 'api_key', accountId: owner.accountId, userId: owner.userId, keyId: owner.keyId },
  });
});

t.test('bearer: each scope opens exactly its routes; voice is never implied by chat', async (t) => {
  const { sql } = await createTestDatabase(t);
  const store = await createTestRedisStore(t);
  const { url } = await startIdentityShell(t, { sql, store, env: { API_RATE_LIMIT_PER_MINUTE: '1000' } });

  for (const scope of SCOPES) {
    const owner = await createOwner(sql, { scopes: [scope] });
    for (const route of SCOPES) {
      const res = await fetch(`${url}${probePath(route)}`, { headers: bearer(owner.secret) });
      if (route === scope) {
        t.equal(res.status, 200, `a ${scope} key opens the ${route} route`);
        t.match(await res.json(), { principal: { kind: 'api_key', scopes: [scope] } });
      } else {
        t.equal(res.status, 403, `a ${scope} key is refused on the ${route} route`);
        t.match(await res.json(), { code: 'AUTH_MISSING_SCOPE', details: { requiredScope: route } });
      }
    }
  }
  const chatOnly = await createOwner(sql, { scopes: ['chat'] });
  const voice = await fetch(`${url}${probePath('voice')}`, { headers: bearer(chatOnly.secret) });
  t.equal(voice.status, 403, 'chat does not imply voice');
  await voice.arrayBuffer();

  // The guard every route family reuses.
  for (const scope of SCOPES) await checkBearerGuard(t, { url, sql, method: 'GET', path: probePath(scope), scope });
});

t.test('bearer-or-keyless: no header is a keyless caller; a header is exactly bearer', async (t) => {
  const { sql } = await createTestDatabase(t);
  const store = await createTestRedisStore(t);
  const { url } = await startIdentityShell(t, { sql, store });
  const chat = await createOwner(sql, { scopes: ['chat'] });
  const voice = await createOwner(sql, { scopes: ['voice'] });
  const path = `${url}/test/keyless-or-chat`;

  let res = await fetch(path, { method: 'POST' });
  t.equal(res.status, 200);
  t.same(await res.json(), { principal: { kind: 'keyless' } });
  t.equal(res.headers.get('ratelimit'), null, 'keyless callers get no key rate-limit headers');

  res = await fetch(path, { method: 'POST', headers: bearer(chat.secret) });
  t.equal(res.status, 200);
  t.match(await res.json(), { principal: { kind: 'api_key', keyId: chat.keyId } });
  t.match(res.headers.get('ratelimit'), /^limit=60, remaining=\d+, reset=\d+$/);

  res = await fetch(path, { method: 'POST', headers: bearer(voice.secret) });
  t.equal(res.status, 403, 'a key without the route scope is refused, not downgraded to keyless');
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_MISSING_SCOPE');

  res = await fetch(path, { method: 'POST', headers: { authorization: 'Bearer nope' } });
  t.equal(res.status, 401, 'a bad key is refused, not downgraded to keyless');
  await res.arrayBuffer();
});

t.test(
  'revoking a key or suspending an account stops it on every instance: where revoked on the next request, elsewhere when the invalidation arrives (within the 2 s key cache bound)',
  async (t) => {
    const { sql } = await createTestDatabase(t);
    const prefix = uniquePrefix('identity');
    const storeA = await createTestRedisStore(t, prefix);
    const a = await startIdentityShell(t, { sql, store: storeA });
    const b = await startIdentityShell(t, { sql, store: await createTestRedisStore(t, prefix) });
    const owner = await createOwner(sql);
    const other = await createOwner(sql);
    const get = (base: string, secret: string) =>
      fetch(`${base}${probePath('assistants:read')}`, { headers: bearer(secret) });

    // Both instances have the key in their caches.
    for (const base of [a.url, b.url]) t.equal((await get(base, owner.secret)).status, 200);

    // A status change or revocation is published to every instance; an instance drops its cached key when that
    // message reaches it (milliseconds; nobody waits for the other instances to read it), and within the key cache's
    // 2 s bound if it were lost. So the other instance is asked until its answer changes, for at most 2.5 s.
    const until = async (
      base: string,
      status: number,
      code?: string,
    ): Promise<{ status: number; code: unknown; headers: Headers }> => {
      const since = Date.now();
      for (;;) {
        const res = await get(base, owner.secret);
        const body = res.status === 200 ? undefined : ((await res.json()) as ErrorBody);
        if (res.status === 200) await res.arrayBuffer().catch(() => undefined);
        const answer = { status: res.status, code: body?.code, headers: res.headers };
        if ((answer.status === status && (code === undefined || answer.code === code)) || Date.now() - since >= 2500)
          return answer;
        await sleep(10);
      }
    };

    // Suspend: refused on both instances, other accounts are untouched.
    await setAccountStatus(sql, storeA, { accountId: owner.accountId, status: 'suspended', actorUserId: null });
    for (const base of [a.url, b.url]) {
      const res = await until(base, 403, 'AUTH_ACCOUNT_SUSPENDED');
      t.equal(res.status, 403, 'a suspended account is refused');
      t.equal(res.code, 'AUTH_ACCOUNT_SUSPENDED');
      t.ok(res.headers.get('ratelimit'), 'still a bearer answer with rate-limit headers');
    }
    t.equal((await get(a.url, other.secret)).status, 200, 'another account is not affected');
    await setAccountStatus(sql, storeA, { accountId: owner.accountId, status: 'disabled', actorUserId: null });
    t.equal((await until(b.url, 403, 'AUTH_ACCOUNT_DISABLED')).code, 'AUTH_ACCOUNT_DISABLED');
    await setAccountStatus(sql, storeA, { accountId: owner.accountId, status: 'active', actorUserId: null });
    for (const base of [a.url, b.url]) t.equal((await until(base, 200)).status, 200, 'reactivated');

    // Revoke through the dashboard on instance A: A refuses on the very next request, B once the message reaches it.
    const cookie = await login(a.url, owner.email, owner.password);
    const del = await fetch(`${a.url}/api/account/keys/${owner.keyId}`, {
      method: 'DELETE',
      headers: dashboardHeaders(a.url, cookie),
    });
    t.equal(del.status, 200);
    const onA = await get(a.url, owner.secret);
    t.equal(onA.status, 401, 'a revoked key is refused on the next request where it was revoked');
    t.equal(((await onA.json()) as ErrorBody).code, 'AUTH_KEY_REVOKED');
    const onB = await until(b.url, 401, 'AUTH_KEY_REVOKED');
    t.equal(onB.status, 401, 'and on every other instance within the key cache bound (2 s)');
    t.equal(onB.code, 'AUTH_KEY_REVOKED');

    // The audit log recorded each status change with before and after.
    const audit = await sql<Array<{ action: string; before: unknown; after: unknown }>>`
    select action, before, after from audit_log where target_id = ${owner.accountId} order by created_at`;
    t.same(
      audit.map((r) => [r.action, r.before, r.after]),
      [
        ['account.status_changed', { status: 'active' }, { status: 'suspended' }],
        ['account.status_changed', { status: 'suspended' }, { status: 'disabled' }],
        ['account.status_changed', { status: 'disabled' }, { status: 'active' }],
      ],
    );
  },
);
