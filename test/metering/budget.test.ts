import t from 'tap';
import { readAuditLog } from '../../src/audit/index.js';
import { forecastOf, Meter, thresholdChanges, type ThresholdAlert } from '../../src/metering/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, dashboardHeaders, login, type TestOwner } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { createTestMeter, METER_DEFAULTS, refusalOf } from '../helpers/metering.js';

const app = await startTestApp(t, { env: { HOSTED_USAGE_ENFORCEMENT: 'enforce' } });
const { sql } = app.database;

async function signedIn(): Promise<{ owner: TestOwner; headers: Record<string, string> }> {
  const owner = await createOwner(sql);
  return { owner, headers: dashboardHeaders(app.url, await login(app.url, owner.email, owner.password)) };
}
const getJson = async (path: string, headers: Record<string, string>) => {
  const res = await fetch(`${app.url}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as any };
};
const putBudget = async (headers: Record<string, string>, body: unknown) => {
  const res = await fetch(`${app.url}/api/v1/account/budget`, { method: 'PUT', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
/** Spends `micros` on the account now (a settled chat request of that cost). */
async function spend(meter: Meter, accountId: string, micros: number) {
  const r = await meter.admit({ accountId, kind: 'chat', source: 'api', audience: 'owner', estimateMicros: micros });
  await meter.settle(r, { actualMicros: micros });
}

t.test('budget settings: defaults, validation with the field named, the effective budget and its source', async (t) => {
  const { owner, headers } = await signedIn();
  const first = await getJson('/api/v1/account/budget', headers);
  t.equal(first.status, 200);
  t.match(first.body.budget, {
    alertThresholdsPercent: [50, 80, 100],
    hardLimitMicros: null,
    effective: { budgetMicros: 1_000_000, source: 'plan', planBudgetMicros: 1_000_000, hardLimitMicros: null },
    spentMicros: 0,
    alerts: [],
  });
  t.equal((await getJson('/api/v1/account/budget', bearer(owner.secret))).status, 401, 'an API key is not a session');

  for (const [body, path] of [
    [{ alertThresholdsPercent: [0] }, 'alertThresholdsPercent'],
    [{ alertThresholdsPercent: [101] }, 'alertThresholdsPercent'],
    [{ alertThresholdsPercent: [10, 20, 30, 40, 50, 60] }, 'alertThresholdsPercent'],
    [{ alertThresholdsPercent: [50, 50] }, 'alertThresholdsPercent'],
    [{ hardLimitMicros: -1 }, 'hardLimitMicros'],
    [{ hardLimitMicros: 1.5 }, 'hardLimitMicros'],
  ] as const) {
    const res = await putBudget(headers, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.code, 'VALIDATION_FAILED');
    t.match(JSON.stringify(res.body.details), path, `the answer names ${path}`);
  }
  const above = await putBudget(headers, { hardLimitMicros: 1_000_001 });
  t.equal(above.status, 400);
  t.match(above.body, {
    code: 'BUDGET_HARD_LIMIT_ABOVE_BUDGET',
    details: { field: 'hardLimitMicros', maxMicros: 1_000_000 },
  });

  const set = await putBudget(headers, { alertThresholdsPercent: [90, 25], hardLimitMicros: 400_000 });
  t.equal(set.status, 200);
  t.match(set.body.budget, {
    alertThresholdsPercent: [25, 90],
    hardLimitMicros: 400_000,
    effective: { budgetMicros: 400_000, source: 'hard_limit', planBudgetMicros: 1_000_000 },
  });
  const kept = await putBudget(headers, { alertThresholdsPercent: [50] });
  t.equal(kept.body.budget.hardLimitMicros, 400_000, 'a field left out keeps its value');
  const audit = await readAuditLog(sql, { targetType: 'budget', targetId: owner.accountId });
  t.equal(audit.filter((a) => a.action === 'budget.updated').length, 2, 'each change is audited');

  await sql`update hosting_accounts set limit_override_micros = 300000 where account_id = ${owner.accountId}`;
  const override = await getJson('/api/v1/account/budget', headers);
  t.match(override.body.budget.effective, { budgetMicros: 300_000, source: 'operator_override' });
});

t.test('the hard limit is the budget admission enforces: 402 for owners, a neutral 403 for visitors', async (t) => {
  const { owner, headers } = await signedIn();
  t.equal((await putBudget(headers, { hardLimitMicros: 5_000 })).status, 200);
  const { meter } = createTestMeter(sql);
  await spend(meter, owner.accountId, 4_000);
  const request = { accountId: owner.accountId, kind: 'chat' as const, source: 'api' as const, estimateMicros: 2_000 };
  const refused = await refusalOf(meter.admit({ ...request, audience: 'owner' }));
  t.match(refused, { status: 402, reason: 'usage_limit', details: { limitMicros: 5_000, consumedMicros: 4_000 } });
  const visitor = await refusalOf(meter.admit({ ...request, source: 'widget', audience: 'visitor' }));
  t.equal(visitor.status, 403);
  t.notMatch(JSON.stringify({ ...visitor, stack: undefined }), /budget|usage|plan|limit|billing/i);
  t.equal((await putBudget(headers, { hardLimitMicros: null })).status, 200);
  t.ok((await meter.admit({ ...request, audience: 'owner' })).id, 'removing the hard limit lifts the stop');
});

t.test('each threshold fires exactly once per period, with spend arriving at once on two instances', async (t) => {
  const { owner, headers } = await signedIn();
  const received: ThresholdAlert[] = [];
  const instance = () =>
    new Meter({
      sql,
      config: METER_DEFAULTS,
      log: captureLogger().log,
      onThresholdCrossed: (alert) => void received.push(alert),
    });
  const [a, b] = [instance(), instance()];
  // 40 requests of 30,000 micros (1.2 M in all, over the 1 M free budget): many cross each threshold at once.
  const reservations = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? a : b).admit({
        accountId: owner.accountId,
        kind: 'chat',
        source: 'api',
        audience: 'owner',
        estimateMicros: 0,
      }),
    ),
  );
  await Promise.all(reservations.map((r, i) => (i % 2 ? a : b).settle(r, { actualMicros: 30_000 })));
  t.same(
    received.map((r) => r.thresholdPercent).sort((x, y) => x - y),
    [50, 80, 100],
    'one event per threshold, whichever instance wins',
  );
  const fifty = received.find((r) => r.thresholdPercent === 50)!;
  t.equal(fifty.budgetMicros, 1_000_000);
  t.ok(fifty.spentMicros >= 500_000 && fifty.spentMicros < 530_000, 'spent as the crossing saw it');
  t.ok(fifty.projectedMicros >= fifty.spentMicros, 'the projection is at least what is spent');
  t.match(fifty, { accountId: owner.accountId, periodStart: String, periodEnd: String });

  const audit = await readAuditLog(sql, { targetType: 'budget', targetId: owner.accountId });
  t.same(
    audit
      .filter((e) => e.action === 'budget.threshold_crossed')
      .map((e) => (e.after as ThresholdAlert).thresholdPercent)
      .sort((x, y) => x - y),
    [50, 80, 100],
    'one audit entry per crossing',
  );
  const banner = await getJson('/api/v1/account/budget', headers);
  t.same(
    banner.body.budget.alerts.map((x: { thresholdPercent: number }) => x.thresholdPercent),
    [50, 80, 100],
    'the banner shows every crossing this period',
  );

  // Raising the budget re-arms the thresholds the spend is now below (1.2 M of 2 M: 50 % stays, 80 and 100 re-arm).
  await sql`update hosting_accounts set limit_override_micros = 2000000 where account_id = ${owner.accountId}`;
  const raised = await putBudget(headers, {});
  t.same(
    raised.body.budget.alerts.map((x: { thresholdPercent: number }) => x.thresholdPercent),
    [50],
  );
  received.length = 0;
  await spend(a, owner.accountId, 450_000); // 1.65 M of 2 M: 80 % again
  t.same(
    received.map((r) => r.thresholdPercent),
    [80],
    'a re-armed threshold fires again; the others stay quiet',
  );
});

t.test('a lowered hard limit fires the thresholds it puts spend over, at once', async (t) => {
  const { owner, headers } = await signedIn();
  const { meter } = createTestMeter(sql);
  await spend(meter, owner.accountId, 300_000);
  t.same((await getJson('/api/v1/account/budget', headers)).body.budget.alerts, []);
  const lowered = await putBudget(headers, { hardLimitMicros: 350_000 });
  t.same(
    lowered.body.budget.alerts.map((x: { thresholdPercent: number; budgetMicros: number }) => [
      x.thresholdPercent,
      x.budgetMicros,
    ]),
    [
      [50, 350_000],
      [80, 350_000],
    ],
  );
});

t.test('thresholdChanges and forecastOf, to the micro', async (t) => {
  t.same(thresholdChanges([50, 80, 100], [], 499_999, 1_000_000), { fire: [], rearm: [] });
  t.same(thresholdChanges([50, 80, 100], [], 500_000, 1_000_000), { fire: [50], rearm: [] });
  t.same(thresholdChanges([50, 80, 100], [50, 80], 700_000, 2_000_000), { fire: [], rearm: [50, 80] });
  t.same(thresholdChanges([50], [], 0, 0), { fire: [], rearm: [] }, 'nothing spent crosses nothing');

  const start = new Date('2026-11-01T00:00:00Z');
  const end = new Date('2026-12-01T00:00:00Z');
  // 10 of 30 days gone, 100,000 spent, 5,000 held by live work: pace 10,000 a day, 200,000 more by the end.
  const f = forecastOf({
    periodStart: start,
    periodEnd: end,
    now: new Date('2026-11-11T00:00:00Z'),
    spentMicros: 100_000,
    liveExposureMicros: 5_000,
    budgetMicros: 250_000,
    voiceSecondsUsed: 60,
    voiceSecondsReserved: 30,
    voiceSecondsLimit: 600,
  });
  t.equal(f.projectedMicros, 305_000);
  // 145,000 left at 10,000 a day: 14.5 days after Nov 11.
  t.equal(f.projectedExhaustionAt, '2026-11-25T12:00:00.000Z');
  t.same(f.voice, { secondsUsed: 60, secondsLimit: 600, projectedSeconds: 60 + 30 + 120 });
  const enough = forecastOf({
    periodStart: start,
    periodEnd: end,
    now: new Date('2026-11-11T00:00:00Z'),
    spentMicros: 100_000,
    liveExposureMicros: 0,
    budgetMicros: 1_000_000,
    voiceSecondsUsed: 0,
    voiceSecondsReserved: 0,
    voiceSecondsLimit: 0,
  });
  t.equal(enough.projectedExhaustionAt, null, 'the money lasts the period');
});

t.test('daily usage: at most 366 days, dates checked, every day present', async (t) => {
  const { headers } = await signedIn();
  const tooLong = await getJson('/api/v1/account/usage/daily?from=2025-01-01&to=2026-01-02', headers);
  t.equal(tooLong.status, 400);
  t.match(tooLong.body, { code: 'VALIDATION_FAILED', details: { issues: [{ path: 'query.to' }] } });
  const backwards = await getJson('/api/v1/account/usage/daily?from=2025-02-01&to=2025-01-01', headers);
  t.equal(backwards.status, 400);
  const bad = await getJson('/api/v1/account/usage/daily?from=2025-13-45', headers);
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body.details), 'from');
  const year = await getJson('/api/v1/account/usage/daily?from=2025-01-01&to=2026-01-01', headers);
  t.equal(year.status, 200, '366 days is allowed');
  t.equal(year.body.days.length, 366);
  t.equal(year.body.totalMicros, 0);
});

t.test(
  'the sink writes inside the transaction that records the crossing (an outbox row commits with it)',
  async (t) => {
    const { owner } = await signedIn();
    await sql`create table if not exists test_outbox (account_id text, threshold integer)`;
    const meter = new Meter({
      sql,
      config: METER_DEFAULTS,
      log: captureLogger().log,
      onThresholdCrossed: async (alert, tx) => {
        await tx`insert into test_outbox values (${alert.accountId}, ${alert.thresholdPercent})`;
      },
    });
    await spend(meter, owner.accountId, 600_000);
    const rows = await sql<Array<{ threshold: number }>>`
    select threshold from test_outbox where account_id = ${owner.accountId}`;
    t.same(
      rows.map((r) => r.threshold),
      [50],
    );

    // A sink that fails rolls the crossing back with the spend: nothing is half-recorded, and a retried settle fires it.
    const failing = new Meter({
      sql,
      config: METER_DEFAULTS,
      log: captureLogger().log,
      onThresholdCrossed: () => {
        throw new Error('outbox unavailable');
      },
    });
    const r = await failing.admit({
      accountId: owner.accountId,
      kind: 'chat',
      source: 'api',
      audience: 'owner',
      estimateMicros: 250_000,
    });
    await t.rejects(failing.settle(r, { actualMicros: 250_000 }), /outbox unavailable/);
    const [balance] = await sql<[{ consumedMicros: number }]>`
    select consumed_micros from usage_balances where account_id = ${owner.accountId}`;
    t.equal(Number(balance!.consumedMicros), 600_000, 'the spend rolled back with it');
    t.equal((await meter.settle(r, { actualMicros: 250_000 })).status, 'settled', 'still open: the settle is retried');
    t.same(
      (await sql<Array<{ threshold: number }>>`select threshold from test_outbox where account_id = ${owner.accountId}`)
        .map((x) => x.threshold)
        .sort((a, b) => a - b),
      [50, 80],
    );
  },
);
