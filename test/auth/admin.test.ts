import t from 'tap';
import { readAuditLog, writeAuditLog } from '../../src/audit/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner, dashboardHeaders, login, startIdentityShell } from '../helpers/identity.js';
import { createTestRedisStore } from '../helpers/store.js';

interface ErrorBody {
  code: string;
}

t.test('admin gate: no session 401, not listed 403, listed 200', async (t) => {
  const { sql } = await createTestDatabase(t);
  const store = await createTestRedisStore(t);
  const operator = await createOwner(sql);
  const owner = await createOwner(sql);
  const shell = await startIdentityShell(t, {
    sql,
    store,
    env: { ADMIN_USER_IDS: ` ${operator.userId} , usr_someoneelse` },
  });
  const probe = `${shell.url}/api/admin/probe`;

  let res = await fetch(probe);
  t.equal(res.status, 401, 'no session');
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_SESSION_REQUIRED');

  res = await fetch(probe, { headers: bearer(operator.secret) });
  t.equal(res.status, 401, "an API key is not a session, even the operator's");
  await res.arrayBuffer();

  const ownerCookie = await login(shell.url, owner.email, owner.password);
  res = await fetch(probe, { headers: { cookie: ownerCookie } });
  t.equal(res.status, 403, 'signed in, not listed');
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_NOT_ADMIN');

  const operatorCookie = await login(shell.url, operator.email, operator.password);
  res = await fetch(probe, { headers: { cookie: operatorCookie } });
  t.equal(res.status, 200, 'listed operator');
  t.match(await res.json(), {
    principal: { kind: 'session', userId: operator.userId, accountId: operator.accountId, isAdmin: true },
  });

  const me = await fetch(`${shell.url}/api/auth/me`, { headers: { cookie: operatorCookie } });
  t.match(await me.json(), { user: { isAdmin: true } });

  res = await fetch(probe, { method: 'POST', headers: { cookie: operatorCookie } });
  t.equal(res.status, 403, 'admin mutations check Origin too');
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_CSRF');
  res = await fetch(probe, { method: 'POST', headers: dashboardHeaders(shell.url, operatorCookie) });
  t.equal(res.status, 200);
  await res.arrayBuffer();
});

t.test('an empty ADMIN_USER_IDS means nobody is admin', async (t) => {
  const { sql } = await createTestDatabase(t);
  const store = await createTestRedisStore(t);
  const shell = await startIdentityShell(t, { sql, store, env: { ADMIN_USER_IDS: '' } });
  const someone = await createOwner(sql);
  const cookie = await login(shell.url, someone.email, someone.password);
  const res = await fetch(`${shell.url}/api/admin/probe`, { headers: { cookie } });
  t.equal(res.status, 403);
  t.equal(((await res.json()) as ErrorBody).code, 'AUTH_NOT_ADMIN');
});

t.test('writeAuditLog: one row per change, in the change transaction', async (t) => {
  const { sql } = await createTestDatabase(t);
  const operator = await createOwner(sql);
  const id = await writeAuditLog(sql, {
    actorUserId: operator.userId,
    action: 'account.updated',
    targetType: 'account',
    targetId: 'acct_x',
    before: { planCode: 'free' },
    after: { planCode: 'pro' },
    requestId: 'req-1',
  });
  t.match(id, /^aud_/);
  // A change that rolls back takes its audit row with it.
  await t.rejects(
    sql.begin(async (tx) => {
      await writeAuditLog(tx, {
        actorUserId: operator.userId,
        action: 'account.updated',
        targetType: 'account',
        targetId: 'acct_x',
        after: { planCode: 'business' },
      });
      throw new Error('the change failed');
    }),
  );
  const rows = await readAuditLog(sql, { targetType: 'account', targetId: 'acct_x' });
  t.equal(rows.length, 1);
  t.match(rows[0], {
    id,
    actorUserId: operator.userId,
    action: 'account.updated',
    before: { planCode: 'free' },
    after: { planCode: 'pro' },
    requestId: 'req-1',
  });
});
