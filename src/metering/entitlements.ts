import { refusalError, type Audience } from './errors.js';
import * as q from './queries.js';
import type { Meter } from './service.js';

/**
 * Enforce mode: refuses (403 `plan_limit` for owners) when the account already has as many assistants as its
 * plan allows. Call it inside the transaction that inserts the assistant: it locks the hosting account, so two
 * concurrent creations cannot both pass the count. Shadow and off never refuse.
 */
export async function assertCanCreateAssistant(
  meter: Meter,
  tx: q.Queryable,
  accountId: string,
  audience: Audience = 'owner',
): Promise<void> {
  if (meter.mode !== 'enforce') return;
  const locked = await meter.lock(tx, accountId);
  const max = locked.plan.maxAssistants;
  if (max === null) return;
  const count = await q.countAssistants(tx, accountId);
  if (count >= max) throw refusalError({ kind: 'assistants', maxAssistants: max, assistantCount: count }, audience);
}

/**
 * Enforce mode: refuses (403 `plan_limit`) when the plan has no evals, before any eval work is queued. The eval
 * requests themselves are still admitted one by one with kind `eval`.
 */
export async function assertEvalsAllowed(meter: Meter, accountId: string, audience: Audience = 'owner'): Promise<void> {
  if (meter.mode !== 'enforce') return;
  const locked = await meter.sql.begin((tx) => meter.lock(tx, accountId));
  if (!locked.plan.evalsEnabled) throw refusalError({ kind: 'evals', planCode: locked.plan.planCode }, audience);
}
