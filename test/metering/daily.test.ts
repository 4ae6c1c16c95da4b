import t from 'tap';
import { createUser } from '../../src/auth/index.js';
import { dailyUsage } from '../../src/metering/budget-report.js';
import type { Meter } from '../../src/metering/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_PASSWORD } from '../helpers/identity.js';
import { createTestMeter, ManualClock } from '../helpers/metering.js';

/**
 * The per-day roll-up, kept by the usage-event trigger: days are UTC dates, a settle that lands after its period
 * ended still counts on that period's last day, and the days of each period add up to its balance to the micro.
 */
const { sql } = await createTestDatabase(t);
const clock = new ManualClock('2030-01-03T08:00:00Z');
const { meter } = createTestMeter(sql, { clock, config: { HOSTED_USAGE_DEFAULT_LIMIT_MICROS: 100_000_000 } });
const { accountId } = await createUser(sql, { email: `daily-${Date.now()}@example.test`, password: TEST_PASSWORD });
await sql`update hosting_accounts set period_start = '2030-01-01T00:00:00Z', period_end = '2030-02-01T00:00:00Z',
          period_anchor = '2030-01-01T00:00:00Z', limit_override_micros = 100000000 where account_id = ${accountId}`;

async function spend(m: Meter, micros: number, kind: 'chat' | 'ingestion', source: 'api' | 'widget' | 'dashboard') {
  const r = await m.admit({
    accountId,
    kind,
    source,
    audience: 'owner',
    estimateMicros: micros,
    assistantId: 'asst_d',
  });
  await m.settle(r, { actualMicros: micros });
}

t.test('days, sources and a late settle add up per period', async (t) => {
  await spend(meter, 1_000, 'chat', 'api');
  clock.set('2030-01-03T23:59:59.999Z');
  await spend(meter, 2_000, 'chat', 'widget');
  clock.set('2030-01-10T12:00:00Z');
  await spend(meter, 500, 'ingestion', 'dashboard');
  // Admitted in January, settled after the period ended: January's spend, on its last day.
  clock.set('2030-01-31T23:00:00Z');
  const late = await meter.admit({
    accountId,
    kind: 'chat',
    source: 'api',
    audience: 'owner',
    estimateMicros: 700,
    assistantId: 'asst_d',
  });
  clock.set('2030-02-01T00:30:00Z');
  await meter.settle(late, { actualMicros: 700 });
  await spend(meter, 4_000, 'chat', 'api'); // February's first spend (the period rolls here)

  const january = await dailyUsage(meter, accountId, { from: '2030-01-01', to: '2030-01-31' });
  t.equal(january.days.length, 31, 'every day, zero-filled');
  const byDate = Object.fromEntries(january.days.map((d) => [d.date, d.costMicros]));
  t.equal(byDate['2030-01-03'], 3_000, 'both sides of the last millisecond of the day');
  t.equal(byDate['2030-01-10'], 500);
  t.equal(byDate['2030-01-31'], 700, 'the late settle counts on the period’s last day');
  t.equal(january.totalMicros, 4_200);
  const jan3 = january.days.find((d) => d.date === '2030-01-03')!;
  t.same(
    jan3.bySource.map((s) => [s.source, s.costMicros, s.requestCount]),
    [
      ['api', 1_000, 1],
      ['widget', 2_000, 1],
    ],
  );
  t.same(jan3.byAssistant, [{ assistantId: 'asst_d', costMicros: 3_000, requestCount: 2 }]);
  const jan10 = january.days.find((d) => d.date === '2030-01-10')!;
  t.same(jan10.byKind, [{ kind: 'ingestion', costMicros: 500, units: 0 }]);

  const current = await dailyUsage(meter, accountId, {});
  t.equal(current.currentPeriodOnly, true);
  t.equal(current.periodStart, '2030-02-01T00:00:00.000Z');
  t.same(
    current.days.map((d) => [d.date, d.costMicros]),
    [['2030-02-01', 4_000]],
    'the current period so far: one day',
  );

  const balances = await sql<Array<{ periodStart: Date; consumedMicros: number }>>`
    select period_start, consumed_micros from usage_balances where account_id = ${accountId} order by period_start`;
  t.same(
    balances.map((b) => Number(b.consumedMicros)),
    [january.totalMicros, current.totalMicros],
    'each period: days add up to budget used',
  );
});
