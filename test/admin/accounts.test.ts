import t from 'tap';
import { readAuditLog } from '../../src/audit/index.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { createTestMeter } from '../helpers/metering.js';

const database = await createTestDatabase(t);
const { sql } = database;
const operator = await createOwner(sql);
const app = await startTestApp(t, {
  database,
  env: { ADMIN_USER_IDS: operator.userId, HOSTED_USAGE_ENFORCEMENT: 'enforce' },
});
const opCookie = await login(app.url, operator.email, operator.password);
const customer = await createOwner(sql);
const bigSpender = await createOwner(sql);

const call = (method: string, path: string, body?: unknown, cookie = opCookie) =>
  fetch(`${app.url}${path}`, {
    method,
    headers: dashboardHeaders(app.url, cookie),
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

/** The error a promise rejected with (or undefined if it resolved). */
async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    return err;
  }
}

interface AccountBody {
  account: {
    id: string;
    status: string;
    planCode: string;
    limitOverrideMicros: number | null;
    limitMicros: number;
    creditMicros: number;
    consumedMicros: number;
  };
}

t.test('only operators: no session 401, owner 403', async (t) => {
  let res = await fetch(`${app.url}/api/admin/accounts`);
  t.equal(res.status, 401);
  await res.arrayBuffer();
  const ownerCookie = await login(app.url, customer.email, customer.password);
  res = await call('GET', '/api/admin/accounts', undefined, ownerCookie);
  t.equal(res.status, 403);
  await res.arrayBuffer();
  res = await call('PATCH', `/api/admin/accounts/${customer.accountId}`, { planCode: 'business' }, ownerCookie);
  t.equal(res.status, 403, 'an owner cannot upgrade themselves');
  await res.arrayBuffer();
});

t.test('list is paged and sorted by spend', async (t) => {
  const { meter } = createTestMeter(sql);
  await meter.settle(
    await meter.admit({
      accountId: bigSpender.accountId,
      kind: 'chat',
      source: 'api',
      audience: 'owner',
      estimateMicros: 50_000,
    }),
    { actualMicros: 42_000 },
  );
  await meter.settle(
    await meter.admit({
      accountId: customer.accountId,
      kind: 'chat',
      source: 'api',
      audience: 'owner',
      estimateMicros: 50_000,
    }),
    { actualMicros: 1_000 },
  );
  const res = await call('GET', '/api/admin/accounts?limit=2&offset=0');
  t.equal(res.status, 200);
  const body = (await res.json()) as {
    accounts: Array<{ id: string; consumedMicros: number }>;
    limit: number;
    offset: number;
  };
  t.equal(body.limit, 2);
  t.same(
    body.accounts.map((a) => a.id),
    [bigSpender.accountId, customer.accountId],
  );
  const next = (await (await call('GET', '/api/admin/accounts?limit=2&offset=2')).json()) as {
    accounts: Array<{ id: string }>;
  };
  t.same(
    next.accounts.map((a) => a.id),
    [operator.accountId],
    'the rest on the next page',
  );
});

t.test('PATCH applies and audits status, override and plan', async (t) => {
  let res = await call('PATCH', `/api/admin/accounts/${customer.accountId}`, {});
  t.equal(res.status, 400, 'at least one field');
  await res.arrayBuffer();
  res = await call('PATCH', `/api/admin/accounts/${customer.accountId}`, { planCode: 'platinum' });
  t.equal(res.status, 400, 'unknown plan');
  await res.arrayBuffer();
  res = await call('PATCH', '/api/admin/accounts/acct_doesnotexist', { planCode: 'pro' });
  t.equal(res.status, 404);
  await res.arrayBuffer();

  res = await call('PATCH', `/api/admin/accounts/${customer.accountId}`, {
    planCode: 'pro',
    limitOverrideMicros: 5_000_000,
  });
  t.equal(res.status, 200);
  const patched = ((await res.json()) as AccountBody).account;
  t.match(patched, { planCode: 'pro', limitOverrideMicros: 5_000_000, limitMicros: 5_000_000 });

  const [entry] = await readAuditLog(sql, { targetType: 'account', targetId: customer.accountId });
  t.match(entry, {
    actorUserId: operator.userId,
    action: 'hosting_account.updated',
    before: { planCode: 'free', limitOverrideMicros: null },
    after: { planCode: 'pro', limitOverrideMicros: 5_000_000 },
  });
  t.ok(entry?.requestId, 'the request id is recorded');

  // Suspension is effective on the owner's API keys at once.
  const mint = () =>
    fetch(`${app.url}/api/v1/voice/sessions`, {
      method: 'POST',
      headers: { ...bearer(customer.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ assistantId: 'asst_nosuchassistant00', capabilities: ['heartbeat', 'playback_gate'] }),
    });
  const before = await mint();
  t.not(((await before.json()) as { code: string }).code, 'AUTH_ACCOUNT_SUSPENDED');
  res = await call('PATCH', `/api/admin/accounts/${customer.accountId}`, { status: 'suspended' });
  t.equal(((await res.json()) as AccountBody).account.status, 'suspended');
  const after = await mint();
  t.equal(after.status, 403, 'a suspended account cannot use its keys');
  t.equal(((await after.json()) as { code: string }).code, 'AUTH_ACCOUNT_SUSPENDED');
  const [statusEntry] = await readAuditLog(sql, { targetType: 'account', targetId: customer.accountId });
  t.match(statusEntry, { before: { status: 'active' }, after: { status: 'suspended' } });

  res = await call('PATCH', `/api/admin/accounts/${customer.accountId}`, {
    status: 'active',
    limitOverrideMicros: null,
  });
  t.match(((await res.json()) as AccountBody).account, {
    status: 'active',
    limitOverrideMicros: null,
    limitMicros: 45_000_000,
  });
});

t.test('credit is granted for the current period, audited, and lets an exhausted account continue', async (t) => {
  const broke = await createOwner(sql);
  const { meter } = createTestMeter(sql);
  await meter.settle(
    await meter.admit({
      accountId: broke.accountId,
      kind: 'chat',
      source: 'api',
      audience: 'owner',
      estimateMicros: 1_000_000,
    }),
    { actualMicros: 1_000_000 },
  );
  t.match(
    await refusal(
      meter.admit({
        accountId: broke.accountId,
        kind: 'chat',
        source: 'api',
        audience: 'owner',
        estimateMicros: 10_000,
      }),
    ),
    { status: 402 },
  );

  let res = await call('POST', `/api/admin/accounts/${broke.accountId}/credit`, { creditMicros: 0 });
  t.equal(res.status, 400, 'credit must be positive');
  await res.arrayBuffer();
  res = await call('POST', `/api/admin/accounts/${broke.accountId}/credit`, { creditMicros: 250_000 });
  t.equal(res.status, 200);
  t.match(((await res.json()) as AccountBody).account, {
    creditMicros: 250_000,
    limitMicros: 1_250_000,
    consumedMicros: 1_000_000,
  });
  res = await call('POST', `/api/admin/accounts/${broke.accountId}/credit`, { creditMicros: 50_000 });
  t.match(((await res.json()) as AccountBody).account, { creditMicros: 300_000 });

  const entries = await readAuditLog(sql, { targetType: 'account', targetId: broke.accountId });
  t.same(
    entries.map((e) => [
      e.action,
      (e.before as { creditMicros: number }).creditMicros,
      (e.after as { creditMicros: number }).creditMicros,
    ]),
    [
      ['hosting_account.credit_granted', 250_000, 300_000],
      ['hosting_account.credit_granted', 0, 250_000],
    ],
  );
  t.ok(
    (
      await meter.admit({
        accountId: broke.accountId,
        kind: 'chat',
        source: 'api',
        audience: 'owner',
        estimateMicros: 10_000,
      })
    ).id,
  );
});

t.test('plan entitlement edits are audited and enforced', async (t) => {
  const plans = (await (await call('GET', '/api/admin/plans')).json()) as {
    plans: Array<{ planCode: string; monthlyRequestCap: number }>;
  };
  t.same(
    plans.plans.map((p) => p.planCode),
    ['free', 'starter', 'pro', 'business'],
  );
  let res = await call('PATCH', '/api/admin/plans/free', {});
  t.equal(res.status, 400);
  await res.arrayBuffer();
  res = await call('PATCH', '/api/admin/plans/free', { monthlyRequestCap: 1, evalsEnabled: true });
  t.equal(res.status, 200);
  t.match(await res.json(), { plan: { planCode: 'free', monthlyRequestCap: 1, evalsEnabled: true } });
  t.teardown(
    async () =>
      void (await sql`update plan_entitlements set monthly_request_cap = 75, evals_enabled = false where plan_code = 'free'`),
  );
  const [entry] = await readAuditLog(sql, { targetType: 'plan', targetId: 'free' });
  t.match(entry, {
    actorUserId: operator.userId,
    action: 'plan_entitlements.updated',
    before: { monthlyRequestCap: 75, evalsEnabled: false },
    after: { monthlyRequestCap: 1, evalsEnabled: true },
  });

  const fresh = await createOwner(sql);
  const { meter } = createTestMeter(sql);
  await meter.settle(
    await meter.admit({
      accountId: fresh.accountId,
      kind: 'chat',
      source: 'api',
      audience: 'owner',
      estimateMicros: 10,
    }),
    { actualMicros: 10 },
  );
  t.match(
    await refusal(
      meter.admit({ accountId: fresh.accountId, kind: 'chat', source: 'api', audience: 'owner', estimateMicros: 10 }),
    ),
    {
      status: 402,
      details: { monthlyRequestCap: 1 },
    },
  );
});
