import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { createOwner, dashboardHeaders, login } from '../helpers/identity.js';

interface ErrorBody {
  code: string;
  reason?: string;
}

const json = { 'content-type': 'application/json' };

t.test('login, me, logout, expiry and forged cookies', async (t) => {
  const { url, database } = await startTestApp(t);
  const { sql } = database;
  const owner = await createOwner(sql, { name: 'Ada' });

  // Wrong password and unknown email: the same 401, the same code.
  for (const body of [
    { email: owner.email, password: 'wrong password' },
    { email: 'nobody@example.test', password: owner.password },
  ]) {
    const res = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    t.equal(res.status, 401);
    t.equal(((await res.json()) as ErrorBody).code, 'AUTH_INVALID_CREDENTIALS');
    t.same(res.headers.getSetCookie(), [], 'no cookie on a failed sign-in');
  }

  const res = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { ...json, origin: url },
    body: JSON.stringify({ email: owner.email.toUpperCase(), password: owner.password }),
  });
  t.equal(res.status, 200, 'email is case-insensitive');
  t.same(await res.json(), {
    user: { id: owner.userId, email: owner.email, name: 'Ada', isAdmin: false },
    account: { id: owner.accountId, status: 'active' },
  });
  const setCookie = res.headers.getSetCookie()[0] ?? '';
  t.match(
    setCookie,
    /^parley_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
    'HttpOnly, SameSite=Lax, no Secure in local development',
  );
  const cookie = setCookie.split(';')[0]!;
  const [sessionRow] = await sql<
    Array<{ tokenSha256: string }>
  >`select token_sha256 from sessions where user_id = ${owner.userId}`;
  t.notOk(
    sessionRow?.tokenSha256.includes(cookie.split('=')[1]!.split('.')[0]!),
    'the database keeps only a hash of the token',
  );

  let me = await fetch(`${url}/api/auth/me`, { headers: { cookie } });
  t.equal(me.status, 200);
  t.match(await me.json(), { user: { id: owner.userId }, account: { id: owner.accountId } });

  me = await fetch(`${url}/api/auth/me`);
  t.equal(me.status, 401);
  t.equal(((await me.json()) as ErrorBody).code, 'AUTH_SESSION_REQUIRED');

  // The MAC's last base64url character carries unused bits: the neighbour that decodes to the same bytes is the
  // alteration a decode-and-compare would miss, so that is the one tried.
  const b64url = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const forged = cookie.replace(/.$/, (c) => b64url[b64url.indexOf(c) ^ 1]!);
  me = await fetch(`${url}/api/auth/me`, { headers: { cookie: forged } });
  t.equal(me.status, 401, 'a tampered cookie is refused');
  t.match(me.headers.getSetCookie()[0], /^parley_session=; .*Max-Age=0/, 'and cleared');
  await me.arrayBuffer();

  // Logout revokes server-side: the old cookie value no longer opens anything.
  const out = await fetch(`${url}/api/auth/logout`, { method: 'POST', headers: { cookie, origin: url } });
  t.equal(out.status, 200);
  t.match(out.headers.getSetCookie()[0], /^parley_session=; .*Max-Age=0/, 'the browser is told to drop the cookie');
  await out.arrayBuffer();
  me = await fetch(`${url}/api/auth/me`, { headers: { cookie } });
  t.equal(me.status, 401, 'a logged-out session is dead even if the cookie is replayed');
  await me.arrayBuffer();

  // Expiry is enforced by the server, not by the cookie's Max-Age.
  const second = await login(url, owner.email, owner.password);
  t.equal((await fetch(`${url}/api/auth/me`, { headers: { cookie: second } })).status, 200);
  await sql`update sessions set expires_at = now() - interval '1 second' where user_id = ${owner.userId} and revoked_at is null`;
  me = await fetch(`${url}/api/auth/me`, { headers: { cookie: second } });
  t.equal(me.status, 401, 'an expired session is refused');
  await me.arrayBuffer();
});

t.test('cookie-authenticated mutations check Origin (CSRF)', async (t) => {
  const { url, database } = await startTestApp(t);
  const owner = await createOwner(database.sql);
  const cookie = await login(url, owner.email, owner.password);
  const create = (headers: Record<string, string>) =>
    fetch(`${url}/api/account/keys`, {
      method: 'POST',
      headers: { ...json, cookie, ...headers },
      body: JSON.stringify({ name: 'k', scopes: ['chat'] }),
    });

  for (const [label, headers] of [
    ['no Origin or Referer', {}],
    ['another site', { origin: 'https://evil.example' }],
    ['another port', { origin: url.replace(/:\d+$/, ':1') }],
    ['opaque origin', { origin: 'null' }],
    ['cross-site Referer', { referer: 'https://evil.example/page' }],
  ] as Array<[string, Record<string, string>]>) {
    const res = await create(headers);
    t.equal(res.status, 403, `${label}: refused`);
    t.equal(((await res.json()) as ErrorBody).code, 'AUTH_CSRF');
  }
  t.equal((await database.sql`select 1 from api_keys where name = 'k'`).length, 0, 'nothing was created');

  let res = await create({ origin: url });
  t.equal(res.status, 201, 'same origin passes');
  await res.arrayBuffer();
  res = await create({ referer: `${url}/dashboard/keys` });
  t.equal(res.status, 201, 'a same-origin Referer passes when Origin is absent');
  await res.arrayBuffer();

  const list = await fetch(`${url}/api/account/keys`, { headers: { cookie } });
  t.equal(list.status, 200, 'reads need no Origin');
  await list.arrayBuffer();

  // Login CSRF: another site may not sign this browser in.
  res = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { ...json, origin: 'https://evil.example' },
    body: JSON.stringify({ email: owner.email, password: owner.password }),
  });
  t.equal(res.status, 403);
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_CSRF');
});

t.test('login attempts are rate-limited per email', async (t) => {
  const { url, database } = await startTestApp(t);
  const owner = await createOwner(database.sql);
  const attempt = (email: string, password: string) =>
    fetch(`${url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email, password }) });

  for (let i = 0; i < 10; i++) {
    const res = await attempt(owner.email, `wrong-${i}`);
    t.equal(res.status, 401, `attempt ${i + 1} is checked`);
    await res.arrayBuffer();
  }
  const res = await attempt(owner.email, owner.password);
  t.equal(res.status, 429, 'the 11th attempt is refused, even with the right password');
  const body = (await res.json()) as ErrorBody;
  t.equal(body.code, 'RATE_LIMITED');
  t.notOk('reason' in body);
  t.ok(Number(res.headers.get('retry-after')) >= 1, 'with Retry-After');

  const another = await createOwner(database.sql);
  const ok = await attempt(another.email, another.password);
  t.equal(ok.status, 200, 'another email from the same address is still let in');
  await ok.arrayBuffer();
});

t.test('signup exists only when SIGNUP_ENABLED=true', async (t) => {
  const closed = await startTestApp(t);
  let res = await fetch(`${closed.url}/api/auth/signup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email: 'a@example.test', password: 'long enough password' }),
  });
  t.equal(res.status, 404, 'no signup route by default');
  await res.arrayBuffer();

  const open = await startTestApp(t, { env: { SIGNUP_ENABLED: 'true' } });
  res = await fetch(`${open.url}/api/auth/signup`, {
    method: 'POST',
    headers: { ...json, origin: open.url },
    body: JSON.stringify({ email: 'new@example.test', password: 'long enough password', name: 'New' }),
  });
  t.equal(res.status, 201);
  const body = (await res.json()) as { user: { id: string }; account: { id: string } };
  t.match(body, { user: { email: 'new@example.test', name: 'New', isAdmin: false }, account: { status: 'active' } });
  const cookie = res.headers.getSetCookie()[0]?.split(';')[0] ?? '';
  t.equal((await fetch(`${open.url}/api/auth/me`, { headers: { cookie } })).status, 200, 'signed in after signup');

  const [hosting] = await open.database.sql<
    Array<{ planCode: string }>
  >`select plan_code from hosting_accounts where account_id = ${body.account.id}`;
  t.equal(hosting?.planCode, 'free', 'the new account has a hosting account on plan free');

  res = await fetch(`${open.url}/api/auth/signup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email: 'NEW@example.test', password: 'another long password' }),
  });
  t.equal(res.status, 409, 'an email is taken whatever its letter case');
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_EMAIL_TAKEN');

  for (const bad of [
    { email: 'not-an-email', password: 'long enough password' },
    { email: 'x@example.test', password: 'short' },
    { email: 'y@example.test', password: 'long enough password', name: 'n'.repeat(101) },
    { email: "'; drop table users; --@x", password: 'long enough password' },
  ]) {
    res = await fetch(`${open.url}/api/auth/signup`, { method: 'POST', headers: json, body: JSON.stringify(bad) });
    t.equal(res.status, 400);
    t.equal(((await res.json()) as ErrorBody).code, 'VALIDATION_FAILED');
  }
});

t.test('API keys: created with exact scopes, shown once, listed without secrets, revoked', async (t) => {
  const { url, database } = await startTestApp(t);
  const { sql } = database;
  const owner = await createOwner(sql);
  const stranger = await createOwner(sql);
  const cookie = await login(url, owner.email, owner.password);
  const headers = dashboardHeaders(url, cookie);

  let res = await fetch(`${url}/api/account/keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Production', scopes: ['voice', 'chat', 'chat'] }),
  });
  t.equal(res.status, 201);
  t.equal(res.headers.get('cache-control'), 'no-store', 'the answer carrying the secret is not cached');
  const created = (await res.json()) as {
    key: { id: string; scopes: string[]; prefix: string; lastUsedAt: null };
    secret: string;
  };
  t.match(created.secret, /^sk_live_[0-9A-Za-z]{49}$/);
  t.same(created.key.scopes, ['chat', 'voice'], 'duplicates folded, documented order');
  t.ok(created.secret.startsWith(created.key.prefix));
  t.equal(created.key.lastUsedAt, null);

  res = await fetch(`${url}/api/account/keys`, { headers: { cookie } });
  const listed = await res.text();
  t.notOk(listed.includes(created.secret), 'the list never shows a secret');
  const { keys } = JSON.parse(listed) as { keys: Array<{ id: string }> };
  t.same(keys.map((k) => k.id).sort(), [owner.keyId, created.key.id].sort(), 'the account sees its own keys only');

  for (const [label, body] of [
    ['unknown scope', { name: 'x', scopes: ['chat', 'admin'] }],
    ['no scopes', { name: 'x', scopes: [] }],
    ['oversized name', { name: 'n'.repeat(101), scopes: ['chat'] }],
    ['empty name', { name: '  ', scopes: ['chat'] }],
    ['scopes not a list', { name: 'x', scopes: 'chat' }],
  ] as Array<[string, unknown]>) {
    res = await fetch(`${url}/api/account/keys`, { method: 'POST', headers, body: JSON.stringify(body) });
    t.equal(res.status, 400, `${label}: 400`);
    t.equal(((await res.json()) as ErrorBody).code, 'VALIDATION_FAILED');
  }

  res = await fetch(`${url}/api/account/keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: "Robert'); DROP TABLE api_keys;--", scopes: ['chat'] }),
  });
  t.equal(res.status, 201, 'SQL-looking names are just names');
  await res.arrayBuffer();

  res = await fetch(`${url}/api/account/keys/${stranger.keyId}`, { method: 'DELETE', headers });
  t.equal(res.status, 404, "another account's key is not found");
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_KEY_NOT_FOUND');
  res = await fetch(`${url}/api/account/keys/${encodeURIComponent("key_1' OR '1'='1")}`, { method: 'DELETE', headers });
  t.equal(res.status, 400, 'a malformed key id is a validation error');
  t.equal(((await res.json()) as ErrorBody).code, 'VALIDATION_FAILED');

  res = await fetch(`${url}/api/account/keys/${created.key.id}`, { method: 'DELETE', headers });
  t.equal(res.status, 200);
  t.same(await res.json(), { ok: true });
  res = await fetch(`${url}/api/account/keys/${created.key.id}`, { method: 'DELETE', headers });
  t.equal(res.status, 404, 'revoking twice: the key is gone');
  await res.arrayBuffer();
  const after = (await (await fetch(`${url}/api/account/keys`, { headers: { cookie } })).json()) as {
    keys: Array<{ id: string }>;
  };
  t.notOk(
    after.keys.some((k) => k.id === created.key.id),
    'a revoked key leaves the list',
  );

  res = await fetch(`${url}/api/account/keys`);
  t.equal(res.status, 401, 'key management needs a session');
  await res.arrayBuffer();
  res = await fetch(`${url}/api/account/keys`, { headers: { authorization: `Bearer ${owner.secret}` } });
  t.equal(res.status, 401, 'an API key cannot manage keys');
  await res.arrayBuffer();
});

t.test('session cookies are Secure in production', async (t) => {
  const { url, database } = await startTestApp(t, { env: { NODE_ENV: 'production' } });
  const owner = await createOwner(database.sql);
  const res = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email: owner.email, password: owner.password }),
  });
  t.equal(res.status, 200);
  t.match(res.headers.getSetCookie()[0], /; HttpOnly; SameSite=Lax; .*Secure$/);
  await res.arrayBuffer();
});
