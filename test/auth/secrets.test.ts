import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner, dashboardHeaders, login, probePath, startIdentityShell } from '../helpers/identity.js';
import { createTestRedisStore } from '../helpers/store.js';

t.test("a key's secret appears nowhere in the database or the logs", async (t) => {
  const { sql } = await createTestDatabase(t);
  const store = await createTestRedisStore(t);
  const shell = await startIdentityShell(t, { sql, store, env: { API_RATE_LIMIT_PER_MINUTE: '3' } });
  const owner = await createOwner(sql);
  const cookie = await login(shell.url, owner.email, owner.password);

  const res = await fetch(`${shell.url}/api/account/keys`, {
    method: 'POST',
    headers: dashboardHeaders(shell.url, cookie),
    body: JSON.stringify({ name: 'leak check', scopes: ['chat'] }),
  });
  t.equal(res.status, 201);
  const { secret } = (await res.json()) as { secret: string };
  const secrets = [owner.secret, secret];

  // Use the keys every way a request can go: allowed, wrong scope, rate-limited, mangled, revoked.
  for (const s of secrets) {
    for (let i = 0; i < 4; i++)
      await (await fetch(`${shell.url}${probePath('chat')}`, { headers: bearer(s) })).arrayBuffer();
    await (await fetch(`${shell.url}${probePath('voice')}`, { headers: bearer(s) })).arrayBuffer();
    await (
      await fetch(`${shell.url}${probePath('chat')}`, { headers: { authorization: `Bearer ${s}x` } })
    ).arrayBuffer();
    await (await fetch(`${shell.url}${probePath('chat')}`, { headers: { authorization: `Token ${s}` } })).arrayBuffer();
  }
  await (
    await fetch(`${shell.url}/api/account/keys/${owner.keyId}`, {
      method: 'DELETE',
      headers: dashboardHeaders(shell.url, cookie),
    })
  ).arrayBuffer();
  await (await fetch(`${shell.url}${probePath('chat')}`, { headers: bearer(owner.secret) })).arrayBuffer();

  // Every row of every table, as text.
  const tables = await sql<Array<{ tableName: string }>>`
    select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
  t.ok(tables.some((r) => r.tableName === 'api_keys'));
  let dump = '';
  for (const { tableName } of tables) {
    const rows = await sql.unsafe(`select t::text as row from "${tableName}" t`);
    dump += rows.map((r) => String(r['row'])).join('\n');
  }
  t.ok(dump.includes(owner.keyId), 'the dump does contain the keys (the check can see them)');
  const logText = shell.logs.text();
  t.ok(logText.includes(owner.keyId), 'the logs mention the key by id');
  for (const s of secrets) {
    const randomPart = s.slice('sk_live_'.length);
    t.notOk(dump.includes(randomPart.slice(0, 20)), 'no part of the secret beyond the display prefix is stored');
    t.notOk(dump.includes(s), 'the secret is not stored');
    t.notOk(logText.includes(randomPart.slice(6, 30)), 'the secret is not logged');
  }
});
