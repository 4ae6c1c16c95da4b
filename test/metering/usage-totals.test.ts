import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
import { createOwner } from '../helpers/identity.js';

/**
 * The per-period totals the usage report reads (migration 0007) must equal the aggregate of the raw events after
 * every kind of write the meter makes: insert settled / released / expired, expired -> settled, and delete.
 */
t.test(
  'usage totals equal the aggregate of usage_events through inserts, the expired -> settled update and deletes',
  async (t) => {
    const { sql } = await createTestDatabase(t);
    const owner = await createOwner(sql);
    const other = await createOwner(sql);
    const period = new Date('2026-11-01T00:00:00Z');
    for (const accountId of [owner.accountId, other.accountId]) {
      await sql`insert into usage_balances (account_id, period_start, period_end) values (${accountId}, ${period}, ${new Date('2026-12-01T00:00:00Z')})`;
    }
    let n = 0;
    const event = async (
      accountId: string,
      e: { assistantId: string | null; outcome: string; counts: boolean; cost: number; tokens: number },
    ) => {
      n++;
      await sql`insert into usage_reservations (id, account_id, period_start, kind, source, assistant_id, counts_as_request, status, created_at)
              values (${`ures_${n}`}, ${accountId}, ${period}, 'chat', 'api', ${e.assistantId}, ${e.counts}, 'settled', now())`;
      await sql`insert into usage_events (id, reservation_id, account_id, period_start, kind, source, assistant_id, mode, outcome,
                input_tokens, output_tokens, cost_micros, created_at)
              values (${`uev_${n}`}, ${`ures_${n}`}, ${accountId}, ${period}, 'chat', 'api', ${e.assistantId}, 'enforce', ${e.outcome},
                ${e.tokens}, ${e.tokens * 2}, ${e.cost}, now())`;
      return `uev_${n}`;
    };
    const raw = (accountId: string) => sql`
    select coalesce(e.assistant_id, '') as key, sum(e.cost_micros)::int8 as cost,
           (count(*) filter (where r.counts_as_request and e.outcome <> 'released'))::int8 as requests,
           sum(e.input_tokens)::int8 as input, sum(e.output_tokens)::int8 as output, count(*)::int8 as events
    from usage_events e join usage_reservations r on r.id = e.reservation_id
    where e.account_id = ${accountId} and e.period_start = ${period} group by 1 order by 1`;
    const totals = (accountId: string) => sql`
    select assistant_key as key, cost_micros as cost, request_count as requests, input_tokens as input, output_tokens as output, events
    from usage_period_assistant_totals where account_id = ${accountId} and period_start = ${period} and events > 0 order by 1`;

    await event(owner.accountId, { assistantId: 'asst_a', outcome: 'settled', counts: true, cost: 120, tokens: 10 });
    await event(owner.accountId, { assistantId: 'asst_a', outcome: 'released', counts: true, cost: 0, tokens: 0 });
    await event(owner.accountId, { assistantId: 'asst_b', outcome: 'settled', counts: false, cost: 50, tokens: 4 });
    const expired = await event(owner.accountId, {
      assistantId: null,
      outcome: 'expired',
      counts: true,
      cost: 0,
      tokens: 0,
    });
    await event(other.accountId, { assistantId: 'asst_a', outcome: 'settled', counts: true, cost: 999, tokens: 99 });
    t.same(await totals(owner.accountId), await raw(owner.accountId), 'after inserts');
    t.equal((await totals(owner.accountId)).length, 3, 'one row per assistant, events without one included');

    // A settle after the sweeper expired the reservation turns the event into settled with the real cost.
    await sql`update usage_events set outcome = 'settled', cost_micros = 70, input_tokens = 7, output_tokens = 14 where id = ${expired}`;
    t.same(await totals(owner.accountId), await raw(owner.accountId), 'after expired -> settled');

    await sql`delete from usage_events where id = ${expired}`;
    t.same(await totals(owner.accountId), await raw(owner.accountId), 'after a delete');
    t.same(await totals(other.accountId), await raw(other.accountId), 'other accounts are kept apart');
  },
);
