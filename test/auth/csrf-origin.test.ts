import t from 'tap';
import { isSameOrigin } from '../../src/auth/csrf.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner, login } from '../helpers/identity.js';

const ctx = (headers: Record<string, string>) => ({ headers });

t.test('the dashboard origin check compares scheme, host and port', async (t) => {
  const host = { host: 'parley.example:8080' };
  t.ok(isSameOrigin(ctx({ ...host, origin: 'http://parley.example:8080' }), undefined));
  t.notOk(isSameOrigin(ctx({ ...host, origin: 'https://parley.example:8080' }), undefined), 'scheme differs');
  t.notOk(isSameOrigin(ctx({ ...host, origin: 'http://parley.example:9090' }), undefined), 'port differs');
  t.notOk(isSameOrigin(ctx({ ...host, origin: 'http://parley.example' }), undefined), 'port missing');
  t.notOk(isSameOrigin(ctx({ ...host, origin: 'http://evil.example:8080' }), undefined), 'host differs');
  t.ok(isSameOrigin(ctx({ host: 'parley.example:80', origin: 'http://parley.example' }), undefined), 'default port');
  t.ok(isSameOrigin(ctx({ host: 'Parley.Example', referer: 'http://parley.example/dash' }), undefined), 'referer');
  t.notOk(isSameOrigin(ctx({ host: 'parley.example' }), undefined), 'neither Origin nor Referer');
  t.notOk(isSameOrigin(ctx({ host: 'a@parley.example', origin: 'http://parley.example' }), undefined));

  // Behind a TLS-terminating proxy: its X-Forwarded-Proto counts only when the proxy is trusted.
  const proxied = { host: 'parley.example', 'x-forwarded-proto': 'https' };
  t.ok(isSameOrigin(ctx({ ...proxied, origin: 'https://parley.example' }), undefined, true));
  t.notOk(isSameOrigin(ctx({ ...proxied, origin: 'http://parley.example' }), undefined, true));
  t.notOk(isSameOrigin(ctx({ ...proxied, origin: 'https://parley.example' }), undefined, false), 'untrusted');

  // PUBLIC_URL decides when set, whatever Host says.
  const publicUrl = 'https://app.parley.example';
  t.ok(isSameOrigin(ctx({ host: 'internal:3000', origin: 'https://app.parley.example' }), publicUrl));
  t.notOk(isSameOrigin(ctx({ host: 'app.parley.example', origin: 'http://app.parley.example' }), publicUrl));
});

t.test('without PUBLIC_URL, an https Origin on an http request cannot create a key with the session', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.deps.sql);
  const cookie = await login(app.url, owner.email, owner.password);
  const create = (origin: string) =>
    fetch(`${app.url}/api/account/keys`, {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'k', scopes: ['chat'] }),
    });
  const https = await create(app.url.replace('http://', 'https://'));
  t.equal(https.status, 403, 'another scheme is another origin');
  t.match(await https.json(), { code: String });
  const otherPort = await create(`http://127.0.0.1:${app.port === 1 ? 2 : app.port - 1}`);
  t.equal(otherPort.status, 403, 'another port is another origin');
  const same = await create(app.url);
  t.equal(same.status, 201, 'the dashboard itself still can');
  const keys = (await (
    await fetch(`${app.url}/api/account/keys`, { headers: { cookie, origin: app.url } })
  ).json()) as { keys: unknown[] };
  t.equal(keys.keys.length, 2, 'only the same-origin key was created (besides the owner key)');
});
