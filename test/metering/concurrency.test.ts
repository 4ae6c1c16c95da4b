import t from 'tap';
import { createUser } from '../../src/auth/index.js';
import { AppError } from '../../src/errors/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_PASSWORD } from '../helpers/identity.js';
import { balanceOf, createTestMeter } from '../helpers/metering.js';
import { prng } from '../helpers/random.js';

const db = await createTestDatabase(t, { poolSize: 12 });
const { sql } = db;
const { meter } = createTestMeter(sql);
const LIMIT = 1_000_000;

const seeds = [1, 7, 42, 1234, Date.now() % 100_000];
let round = 0;
for (const seed of seeds) {
  t.test(`100 concurrent requests near the budget (seed ${seed})`, async (t) => {
    const random = prng(seed);
    const { accountId } = await createUser(sql, {
      email: `conc-${seed}-${++round}@example.test`,
      password: TEST_PASSWORD,
    });
    // Start close to the limit: only a handful of the 100 requests can fit.
    const alreadySpent = LIMIT - 40_000 - Math.floor(random() * 60_000);
    const warmup = await meter.admit({
      accountId,
      kind: 'chat',
      source: 'api',
      audience: 'owner',
      estimateMicros: alreadySpent,
      countsAsRequest: false,
    });
    await meter.settle(warmup, { actualMicros: alreadySpent });

    const plans = Array.from({ length: 100 }, () => {
      const estimate = 2_000 + Math.floor(random() * 18_000);
      return {
        estimate,
        actual: Math.floor(estimate * (0.2 + random() * 0.8)),
        fails: random() < 0.1,
        delayMs: Math.floor(random() * 15),
        source: random() < 0.3 ? ('widget' as const) : ('api' as const),
      };
    });
    const results = await Promise.all(
      plans.map(async (p) => {
        let reservation;
        try {
          reservation = await meter.admit({
            accountId,
            kind: 'chat',
            source: p.source,
            audience: p.source === 'widget' ? 'visitor' : 'owner',
            estimateMicros: p.estimate,
            assistantId: 'asst_concurrency',
          });
        } catch (err) {
          if (err instanceof AppError && (err.status === 402 || err.status === 403))
            return { admitted: false as const, status: err.status, source: p.source };
          throw err;
        }
        await new Promise((resolve) => setTimeout(resolve, p.delayMs));
        if (p.fails) {
          // A failed provider call is released; a racing duplicate release must change nothing.
          await Promise.all([meter.release(reservation), meter.release(reservation)]);
          return { admitted: true as const, id: reservation.id!, cost: 0 };
        }
        // The settle is raced by a duplicate (a retried callback): exactly one may count.
        const [a, b] = await Promise.all([
          meter.settle(reservation, { actualMicros: p.actual }),
          meter.settle(reservation, { actualMicros: p.actual }),
        ]);
        t.equal([a.status, b.status].sort().join(','), 'duplicate,settled', 'one settle wins');
        return { admitted: true as const, id: reservation.id!, cost: p.actual };
      }),
    );

    const admitted = results.filter((r) => r.admitted);
    const refused = results.filter((r) => !r.admitted);
    t.ok(admitted.length > 0, 'some requests fit');
    t.ok(refused.length > 0, 'the budget refused the rest');
    for (const r of refused) t.equal(r.status, r.source === 'widget' ? 403 : 402, 'owners 402, visitors 403');

    const balance = await balanceOf(sql, accountId);
    const maxActual = Math.max(...plans.map((p) => p.actual));
    t.ok(balance!.consumedMicros <= LIMIT + maxActual, `spend ${balance!.consumedMicros} within limit + one request`);
    t.equal(balance!.reservedMicros, 0, 'nothing left held');
    const expectedSpend = alreadySpent + admitted.reduce((sum, r) => sum + (r.admitted ? r.cost : 0), 0);
    t.equal(balance!.consumedMicros, expectedSpend, 'spend is exactly the sum of settled costs');

    const events = await sql<Array<{ reservationId: string; n: number; cost: number }>>`
      select reservation_id, count(*)::int8 as n, sum(cost_micros)::int8 as cost from usage_events
      where account_id = ${accountId} and assistant_id = 'asst_concurrency' group by reservation_id`;
    t.equal(events.length, admitted.length, 'every admitted request has an event, refused ones none');
    t.ok(
      events.every((e) => e.n === 1),
      'exactly one event per request',
    );
    const byId = new Map(events.map((e) => [e.reservationId, e.cost]));
    t.ok(
      admitted.every((r) => r.admitted && byId.get(r.id) === r.cost),
      'each event carries its request cost',
    );
    const [open] = await sql<
      [{ n: number }]
    >`select count(*)::int8 as n from usage_reservations where account_id = ${accountId} and status = 'open'`;
    t.equal(open?.n, 0, 'no reservation left open');
    t.equal(
      balance!.requestCount,
      admitted.filter((r) => r.admitted && r.cost > 0).length,
      'released requests are not counted',
    );
  });
}
