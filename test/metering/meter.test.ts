import t from 'tap';
import { createUser } from '../../src/auth/index.js';
import { MeteringErrorCodes, sweepStaleReservations } from '../../src/metering/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_PASSWORD } from '../helpers/identity.js';
import { balanceOf, createTestMeter, ManualClock, refusalOf, setPlan } from '../helpers/metering.js';

const db = await createTestDatabase(t);
const { sql } = db;
let n = 0;
const newAccount = async () =>
  (await createUser(sql, { email: `meter-${++n}-${Date.now()}@example.test`, password: TEST_PASSWORD })).accountId;

const chat = (accountId: string, estimateMicros: number, extra: Record<string, unknown> = {}) => ({
  accountId,
  kind: 'chat' as const,
  source: 'api' as const,
  audience: 'owner' as const,
  estimateMicros,
  assistantId: 'asst_test',
  ...extra,
});

t.test('seeded plan ladder', async (t) => {
  const plans = await sql<
    Array<{
      planCode: string;
      budgetMicros: number;
      maxAssistants: number;
      monthlyRequestCap: number;
      evalsEnabled: boolean;
      voiceMinutes: number;
      voiceConcurrentCalls: number;
    }>
  >`
    select * from plan_entitlements order by budget_micros`;
  t.same(
    plans.map((p) => [
      p.planCode,
      p.budgetMicros,
      p.maxAssistants,
      p.monthlyRequestCap,
      p.evalsEnabled,
      p.voiceMinutes,
      p.voiceConcurrentCalls,
    ]),
    [
      ['free', 1_000_000, 1, 75, false, 10, 1],
      ['starter', 12_000_000, 5, 2000, false, 120, 2],
      ['pro', 45_000_000, 20, 15000, true, 600, 5],
      ['business', 150_000_000, 100, 50000, true, 2000, 10],
    ],
  );
});

t.test('enforce: reserve, settle exactly once, release gives the hold back', async (t) => {
  const accountId = await newAccount();
  const { meter } = createTestMeter(sql);
  const r = await meter.admit(chat(accountId, 5_000));
  t.same(await balanceOf(sql, accountId), {
    ...(await balanceOf(sql, accountId)),
    reservedMicros: 5_000,
    consumedMicros: 0,
    requestCount: 1,
  });
  const first = await meter.settle(r, { model: 'gpt-4o-mini', inputTokens: 1000, outputTokens: 1000 });
  t.same(first, { status: 'settled', costMicros: 750 }, '1000 in + 1000 out of gpt-4o-mini = 750 micros');
  const again = await meter.settle(r, { actualMicros: 999 });
  t.equal(again.status, 'duplicate', 'a second settle changes nothing');
  t.equal(await meter.release(r), false, 'release after settle changes nothing');
  let b = await balanceOf(sql, accountId);
  t.equal(b?.consumedMicros, 750);
  t.equal(b?.reservedMicros, 0);
  t.equal(b?.requestCount, 1);

  const r2 = await meter.admit(chat(accountId, 7_000));
  t.equal(await meter.release(r2), true);
  t.equal(await meter.release(r2), false, 'released once');
  b = await balanceOf(sql, accountId);
  t.equal(b?.reservedMicros, 0);
  t.equal(b?.requestCount, 1, 'a released request is not counted');
  const events = await sql<
    Array<{ outcome: string; costMicros: number }>
  >`select outcome, cost_micros from usage_events where account_id = ${accountId} order by created_at, outcome`;
  t.same(events.map((e) => e.outcome).sort(), ['released', 'settled'], 'one event per request');
});

t.test('enforce: budget refusal for owners carries reason and limit; visitors get a neutral 403', async (t) => {
  const accountId = await newAccount();
  const { meter } = createTestMeter(sql);
  const r = await meter.admit(chat(accountId, 990_000));
  await meter.settle(r, { actualMicros: 990_000 });
  const owner = await refusalOf(meter.admit(chat(accountId, 20_000)));
  t.equal(owner.status, 402);
  t.equal(owner.reason, 'usage_limit');
  t.equal(owner.code, MeteringErrorCodes.LIMIT_REACHED);
  t.match(owner.details, { limitMicros: 1_000_000, consumedMicros: 990_000, remainingMicros: 10_000 });

  const visitor = await refusalOf(meter.admit(chat(accountId, 20_000, { source: 'widget', audience: 'visitor' })));
  t.equal(visitor.status, 403);
  t.equal(visitor.reason, undefined, 'no reason for visitors');
  t.equal(visitor.details, undefined, 'no details for visitors');
  t.notMatch(`${visitor.code} ${visitor.message}`, /usage|limit|plan|billing|budget|remaining|quota/i);

  const small = await meter.admit(chat(accountId, 10_000));
  t.ok(small.id, 'what still fits is admitted');
  const b = await balanceOf(sql, accountId);
  t.equal(b?.requestCount, 2, 'refused requests are not counted');
});

t.test('enforce: request cap, evals entitlement, override and credit', async (t) => {
  const accountId = await newAccount();
  const { meter } = createTestMeter(sql);
  await sql`update usage_balances set request_count = 75 where account_id = ${accountId}`;
  await meter
    .admit({ ...chat(accountId, 1), countsAsRequest: false })
    .then((r) => meter.settle(r, { actualMicros: 1 }));
  await sql`update usage_balances set request_count = 75 where account_id = ${accountId}`;
  const capped = await refusalOf(meter.admit(chat(accountId, 1)));
  t.equal(capped.status, 402);
  t.equal(capped.code, MeteringErrorCodes.REQUEST_CAP_REACHED);
  t.match(capped.details, { monthlyRequestCap: 75, requestCount: 75 });
  const ingestion = await meter.admit({ ...chat(accountId, 100), kind: 'ingestion' });
  t.equal(ingestion.countsAsRequest, false, 'ingestion is metered but is not a request');

  const evals = await refusalOf(meter.admit({ ...chat(accountId, 100), kind: 'eval' }));
  t.equal(evals.status, 403);
  t.equal(evals.reason, 'plan_limit');
  await setPlan(sql, accountId, 'pro');
  t.ok((await meter.admit({ ...chat(accountId, 100), kind: 'eval' })).id, 'pro includes evals');

  const other = await newAccount();
  await setPlan(sql, other, 'free', 2_000);
  t.equal((await refusalOf(meter.admit(chat(other, 3_000)))).status, 402, 'override lowers the limit');
  await sql`update usage_balances set credit_micros = 1500 where account_id = ${other}`;
  t.ok((await meter.admit(chat(other, 3_000))).id, 'credit raises it for the period');
});

t.test('a plan without a row falls back to HOSTED_USAGE_DEFAULT_LIMIT_MICROS', async (t) => {
  const accountId = await newAccount();
  await setPlan(sql, accountId, 'starter');
  const { meter } = createTestMeter(sql, { config: { HOSTED_USAGE_DEFAULT_LIMIT_MICROS: 5_000 } });
  const [saved] = await sql`delete from plan_entitlements where plan_code = 'starter' returning *`;
  t.teardown(async () => {
    await sql`insert into plan_entitlements ${sql(saved as Record<string, unknown>)} on conflict do nothing`;
  });
  const r = await refusalOf(meter.admit(chat(accountId, 6_000)));
  t.equal(r.status, 402);
  t.match(r.details, { limitMicros: 5_000 });
  t.ok((await meter.admit(chat(accountId, 4_000))).id);
  await sql`insert into plan_entitlements ${sql(saved as Record<string, unknown>)}`;
});

t.test('shadow records spend and never blocks; off writes nothing', async (t) => {
  const accountId = await newAccount();
  const { meter: shadow } = createTestMeter(sql, { config: { HOSTED_USAGE_ENFORCEMENT: 'shadow' } });
  for (let i = 0; i < 3; i++) {
    const r = await shadow.admit(chat(accountId, 600_000));
    await shadow.settle(r, { actualMicros: 600_000 });
  }
  const e = await shadow.admit({ ...chat(accountId, 1), kind: 'eval' });
  t.ok(e.id, 'evals not in the plan are still admitted in shadow');
  const b = await balanceOf(sql, accountId);
  t.equal(b?.consumedMicros, 1_800_000, 'spend beyond the budget is recorded');
  const [events] = await sql<
    [{ n: number }]
  >`select count(*)::int8 as n from usage_events where account_id = ${accountId} and mode = 'shadow'`;
  t.equal(events?.n, 3);

  const quiet = await newAccount();
  const before = await sql<[{ r: number; e: number; b: number }]>`
    select (select count(*) from usage_reservations)::int8 as r, (select count(*) from usage_events)::int8 as e, (select count(*) from usage_balances)::int8 as b`;
  const { meter: off } = createTestMeter(sql, { config: { HOSTED_USAGE_ENFORCEMENT: 'off' } });
  const r = await off.admit(chat(quiet, 50_000_000));
  t.equal(r.id, null);
  t.same(await off.settle(r, { actualMicros: 50_000_000 }), { status: 'unmetered', costMicros: 0 });
  t.equal(await off.release(r), false);
  t.same(await sweepStaleReservations(off), { expired: 0 });
  const after = await sql<[{ r: number; e: number; b: number }]>`
    select (select count(*) from usage_reservations)::int8 as r, (select count(*) from usage_events)::int8 as e, (select count(*) from usage_balances)::int8 as b`;
  t.same(after, before, 'off: no metering rows written');
});

t.test('playground exemption: metered, never refused, not a request', async (t) => {
  const accountId = await newAccount();
  const { meter } = createTestMeter(sql, { config: { HOSTED_USAGE_EXEMPT_PLAYGROUND: true } });
  const r = await meter.admit(chat(accountId, 2_000_000, { source: 'playground' }));
  t.equal(r.enforced, false);
  await meter.settle(r, { actualMicros: 1_500_000 });
  const b = await balanceOf(sql, accountId);
  t.equal(b?.consumedMicros, 1_500_000, 'still metered');
  t.equal(b?.requestCount, 0);
  t.equal(
    (await refusalOf(meter.admit(chat(accountId, 1)))).status,
    402,
    'api chat is refused after the playground spent the budget',
  );
});

t.test('a crash between reserve and settle is healed by the sweeper; a late settle still counts', async (t) => {
  const accountId = await newAccount();
  const clock = new ManualClock();
  const { meter } = createTestMeter(sql, { clock });
  const crashed = await meter.admit(chat(accountId, 900_000));
  t.equal((await refusalOf(meter.admit(chat(accountId, 200_000)))).status, 402, 'the crashed hold blocks');
  clock.advance(14 * 60_000);
  const statusOf = async () =>
    (await sql<[{ status: string }]>`select status from usage_reservations where id = ${crashed.id!}`)[0]?.status;
  await sweepStaleReservations(meter);
  t.equal(await statusOf(), 'open', 'not stale yet');
  clock.advance(2 * 60_000);
  t.ok((await sweepStaleReservations(meter)).expired >= 1);
  t.equal(await statusOf(), 'expired');
  t.same(await sweepStaleReservations(meter), { expired: 0 }, 'sweeping again changes nothing');
  let b = await balanceOf(sql, accountId);
  t.equal(b?.reservedMicros, 0, 'hold released');
  t.equal(b?.requestCount, 1, 'the request still happened');
  t.ok((await meter.admit(chat(accountId, 200_000))).id, 'the budget is usable again');

  const late = await meter.settle(crashed, { actualMicros: 12_345 });
  t.equal(late.status, 'late', 'a settle after expiry records the spend');
  t.equal((await meter.settle(crashed, { actualMicros: 12_345 })).status, 'duplicate');
  b = await balanceOf(sql, accountId);
  t.equal(b?.consumedMicros, 12_345);
  t.equal(b?.reservedMicros, 200_000);
  const [event] = await sql<[{ outcome: string; costMicros: number; n: number }]>`
    select outcome, cost_micros, (select count(*) from usage_events where reservation_id = ${crashed.id!})::int8 as n
    from usage_events where reservation_id = ${crashed.id!}`;
  t.same(event, { outcome: 'settled', costMicros: 12_345, n: 1 }, 'still one event for the request');
});

t.test('periods roll monthly from the anchor with a fresh balance', async (t) => {
  const accountId = await newAccount();
  await sql`update hosting_accounts set period_start = '2030-01-31T00:00:00Z', period_end = '2030-02-28T00:00:00Z', period_anchor = '2030-01-31T00:00:00Z' where account_id = ${accountId}`;
  const clock = new ManualClock('2030-02-10T00:00:00Z');
  const { meter } = createTestMeter(sql, { clock });
  await meter.settle(await meter.admit(chat(accountId, 1_000_000)), { actualMicros: 1_000_000 });
  t.equal((await refusalOf(meter.admit(chat(accountId, 1)))).status, 402);
  clock.set('2030-03-05T00:00:00Z');
  t.ok((await meter.admit(chat(accountId, 1))).id, 'a new period brings a new budget');
  const [h] = await sql<
    [{ periodStart: Date; periodEnd: Date }]
  >`select period_start, period_end from hosting_accounts where account_id = ${accountId}`;
  t.equal(h?.periodStart.toISOString(), '2030-02-28T00:00:00.000Z');
  t.equal(h?.periodEnd.toISOString(), '2030-03-31T00:00:00.000Z', 'anchored on the 31st, not drifting to the 28th');
  const rows = await sql`select period_start from usage_balances where account_id = ${accountId}`;
  t.equal(rows.length, 2, 'one balance row per period');
});
