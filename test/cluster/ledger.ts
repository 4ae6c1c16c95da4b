import type { Sql } from 'postgres';
import type { Test } from 'tap';
import type { EndSeen } from './caller.js';

/**
 * The database agrees with what the callers saw: one voice_sessions row per call with the state, end reason and
 * billable seconds its caller was told, and one usage reservation per call settled exactly once for those seconds.
 * Returns the reservations that belong to no call the callers know (refused mints), for the test to judge.
 */
export async function checkLedger(
  t: Test,
  sql: Sql,
  accountId: string,
  seen: Map<string, EndSeen>,
): Promise<Array<{ sessionId: string; open: number; reservations: number; events: number; units: number }>> {
  const rows = await sql<Array<{ id: string; state: string; endReason: string | null; billableSeconds: number }>>`
    select id, state, end_reason, billable_seconds from voice_sessions where account_id = ${accountId}`;
  t.equal(rows.length, seen.size, 'one row per call');
  const disagreements = rows.filter((r) => {
    const s = seen.get(r.id);
    return (
      s === undefined ||
      s.status !== r.state ||
      (s.endReason ?? null) !== (r.endReason ?? null) ||
      s.billableSeconds !== r.billableSeconds
    );
  });
  t.same(disagreements, [], 'every row says what its caller was told (state, end reason, billable seconds)');
  const usage = await sql<
    Array<{ sessionId: string; open: number; reservations: number; events: number; units: number }>
  >`
    select r.voice_session_id as session_id,
           count(*) filter (where r.status = 'open')::int as open,
           count(*)::int as reservations,
           count(e.id)::int as events,
           coalesce(sum(e.units), 0)::int as units
    from usage_reservations r left join usage_events e on e.reservation_id = r.id
    where r.account_id = ${accountId} and r.kind = 'voice'
    group by r.voice_session_id`;
  t.equal(usage.filter((u) => seen.has(u.sessionId)).length, seen.size, 'every call was metered');
  const unsettled = usage.filter(
    (u) =>
      seen.has(u.sessionId) &&
      (u.open !== 0 || u.events !== u.reservations || u.units !== seen.get(u.sessionId)?.billableSeconds),
  );
  t.same(unsettled, [], 'each call settled exactly once, for the seconds its caller was told');
  return usage.filter((u) => !seen.has(u.sessionId));
}
