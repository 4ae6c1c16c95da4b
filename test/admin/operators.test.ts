/**
 * Operators granted at run time: an operator makes another user an operator (by email) and that user's existing
 * session is admitted to /api/admin/* on its next request, with no restart; revoking takes it back the same way.
 * ADMIN_USER_IDS is still honoured and cannot be revoked from here. Each change writes one audit row.
 */
import t from 'tap';
import { readAuditLog } from '../../src/audit/index.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { createOwner, dashboardHeaders, login } from '../helpers/identity.js';

const database = await createTestDatabase(t);
const { sql } = database;
const operator = await createOwner(sql);
const app = await startTestApp(t, { database, env: { ADMIN_USER_IDS: operator.userId } });
const opCookie = await login(app.url, operator.email, operator.password);
const colleague = await createOwner(sql);
const colleagueCookie = await login(app.url, colleague.email, colleague.password);

async function call(method: string, path: string, body?: unknown, cookie = opCookie) {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: dashboardHeaders(app.url, cookie),
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('a grant and a revocation take effect on the next request of a live session', async (t) => {
  t.equal((await call('GET', '/api/admin/accounts', undefined, colleagueCookie)).status, 403, 'not yet an operator');
  t.equal((await call('GET', '/api/auth/me', undefined, colleagueCookie)).body.user.isAdmin, false);

  const granted = await call('POST', '/api/admin/operators', { email: colleague.email.toUpperCase() });
  t.equal(granted.status, 200);
  t.match(granted.body.operator, {
    userId: colleague.userId,
    email: colleague.email,
    grantedAt: String,
    fromConfig: false,
    isAdmin: true,
  });

  t.equal((await call('GET', '/api/admin/accounts', undefined, colleagueCookie)).status, 200, 'admitted at once');
  t.equal((await call('GET', '/api/auth/me', undefined, colleagueCookie)).body.user.isAdmin, true);
  const fresh = await login(app.url, colleague.email, colleague.password);
  t.equal((await call('GET', '/api/admin/plans', undefined, fresh)).status, 200, 'and on a new session');

  const again = await call('POST', '/api/admin/operators', { userId: colleague.userId });
  t.equal(again.body.operator.grantedAt, granted.body.operator.grantedAt, 'a second grant changes nothing');

  const list = await call('GET', '/api/admin/operators');
  t.same(
    list.body.operators
      .map((o: { userId: string; fromConfig: boolean; isAdmin: boolean }) => [o.userId, o.fromConfig, o.isAdmin])
      .sort(),
    [
      [colleague.userId, false, true],
      [operator.userId, true, true],
    ].sort(),
    'both roads are listed',
  );

  // The new operator can act, and is audited as the actor.
  const patched = await call(
    'PATCH',
    `/api/admin/accounts/${operator.accountId}`,
    { planCode: 'pro' },
    colleagueCookie,
  );
  t.equal(patched.status, 200);

  const revoked = await call('DELETE', `/api/admin/operators/${colleague.userId}`);
  t.equal(revoked.status, 200);
  t.match(revoked.body.operator, { grantedAt: null, isAdmin: false });
  t.equal((await call('GET', '/api/admin/accounts', undefined, colleagueCookie)).status, 403, 'refused at once');
  t.equal((await call('GET', '/api/admin/accounts', undefined, fresh)).status, 403, 'on every session');
  t.equal((await call('DELETE', `/api/admin/operators/${colleague.userId}`)).status, 200, 'revoking twice is fine');

  const audit = await readAuditLog(sql, { targetType: 'user', targetId: colleague.userId });
  t.same(
    audit.map((a) => [a.action, a.actorUserId]).reverse(),
    [
      ['user.admin_granted', operator.userId],
      ['user.admin_revoked', operator.userId],
    ],
    'one audit row per change, none for the repeats',
  );
  t.ok(
    audit.every((a) => a.requestId !== null),
    'with the request id',
  );
});

t.test('ADMIN_USER_IDS is honoured and only changed where it is set', async (t) => {
  const res = await call('DELETE', `/api/admin/operators/${operator.userId}`);
  t.equal(res.status, 409);
  t.equal(res.body.code, 'ADMIN_OPERATOR_FROM_CONFIG');
  t.match(res.body.error, /ADMIN_USER_IDS/);
  t.equal((await call('GET', '/api/admin/accounts')).status, 200, 'still an operator');
});

t.test('refusals: who may grant, and what a grant names', async (t) => {
  const stranger = await createOwner(sql);
  const strangerCookie = await login(app.url, stranger.email, stranger.password);
  let res = await call('POST', '/api/admin/operators', { email: stranger.email }, strangerCookie);
  t.equal(res.status, 403, 'an owner cannot make themselves an operator');
  res = await call('DELETE', `/api/admin/operators/${operator.userId}`, undefined, strangerCookie);
  t.equal(res.status, 403);
  const unsigned = await fetch(`${app.url}/api/admin/operators`);
  t.equal(unsigned.status, 401);
  await unsigned.arrayBuffer();

  res = await call('POST', '/api/admin/operators', { email: 'nobody@example.test' });
  t.equal(res.status, 404);
  t.equal(res.body.code, 'ADMIN_USER_NOT_FOUND');
  res = await call('POST', '/api/admin/operators', {});
  t.equal(res.status, 400);
  t.equal(res.body.code, 'VALIDATION_FAILED');
  t.match(JSON.stringify(res.body.details), /email/, 'the field is named');
  res = await call('POST', '/api/admin/operators', { email: stranger.email, userId: stranger.userId });
  t.equal(res.status, 400, 'one of email or userId, not both');
  res = await call('DELETE', '/api/admin/operators/not-a-user-id');
  t.equal(res.status, 400);
  t.equal((await call('GET', '/api/admin/accounts', undefined, strangerCookie)).status, 403, 'nothing was granted');
});
