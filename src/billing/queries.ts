import type postgres from 'postgres';
import type { SubscriptionState } from './subscriptions.js';

export type Queryable = postgres.ISql<Record<string, never>>;

/** idempotency_keys scope of Polar deliveries (0001_foundation); rows never expire. */
export const WEBHOOK_SCOPE = 'billing:polar';

/**
 * Claims a webhook-id inside the caller's transaction. The insert waits on a concurrent delivery of the same id
 * until that one commits (then this is a replay) or rolls back (then this one proceeds). Returns the stored
 * outcome when the id was already processed, undefined when this transaction owns it now.
 */
export async function claimWebhook(
  tx: Queryable,
  webhookId: string,
  fingerprint: string,
): Promise<{ response: unknown } | undefined> {
  const inserted = await tx`
    insert into idempotency_keys (scope, key, fingerprint) values (${WEBHOOK_SCOPE}, ${webhookId}, ${fingerprint})
    on conflict (scope, key) do nothing returning key`;
  if (inserted.length > 0) return undefined;
  const [row] = await tx<
    { response: unknown }[]
  >`select response from idempotency_keys where scope = ${WEBHOOK_SCOPE} and key = ${webhookId}`;
  return { response: row?.response ?? null };
}

export async function recordWebhookOutcome(
  tx: Queryable,
  webhookId: string,
  outcome: Record<string, string>,
): Promise<void> {
  await tx`update idempotency_keys set response = ${tx.json(outcome)} where scope = ${WEBHOOK_SCOPE} and key = ${webhookId}`;
}

/** Locks the hosting account the event names (serialises all billing changes of one account). */
export async function lockHostingAccount(tx: Queryable, accountId: string): Promise<boolean> {
  const rows = await tx`select 1 from hosting_accounts where account_id = ${accountId} for no key update`;
  return rows.length > 0;
}

const SUB_COLUMNS =
  'id, account_id, customer_id, product_id, status, revoked, current_period_start, current_period_end, source_modified_at, source_rank';

export async function findSubscription(tx: Queryable, id: string): Promise<SubscriptionState | undefined> {
  const [row] = await tx<
    SubscriptionState[]
  >`select ${tx.unsafe(SUB_COLUMNS)} from billing_subscriptions where id = ${id} for update`;
  return row;
}

export async function upsertSubscription(tx: Queryable, s: SubscriptionState): Promise<void> {
  await tx`
    insert into billing_subscriptions (id, account_id, customer_id, product_id, status, revoked, current_period_start,
      current_period_end, source_modified_at, source_rank)
    values (${s.id}, ${s.accountId}, ${s.customerId}, ${s.productId}, ${s.status}, ${s.revoked}, ${s.currentPeriodStart},
      ${s.currentPeriodEnd}, ${s.sourceModifiedAt}, ${s.sourceRank})
    on conflict (id) do update set
      customer_id = excluded.customer_id, product_id = excluded.product_id, status = excluded.status,
      revoked = billing_subscriptions.revoked or excluded.revoked,
      current_period_start = excluded.current_period_start, current_period_end = excluded.current_period_end,
      source_modified_at = excluded.source_modified_at, source_rank = excluded.source_rank`;
}

export async function listSubscriptions(tx: Queryable, accountId: string): Promise<SubscriptionState[]> {
  return tx<
    SubscriptionState[]
  >`select ${tx.unsafe(SUB_COLUMNS)} from billing_subscriptions where account_id = ${accountId}`;
}

export interface HostingBilling {
  planCode: string;
  status: string;
  periodStart: Date;
  periodEnd: Date;
  periodAnchor: Date | null;
  billingCustomerId: string | null;
  billingSubscriptionId: string | null;
  billingSubscriptionStatus: string | null;
  billingProductId: string | null;
}

export async function findHostingBilling(sql: Queryable, accountId: string): Promise<HostingBilling | undefined> {
  const [row] = await sql<HostingBilling[]>`
    select plan_code, status, period_start, period_end, period_anchor, billing_customer_id, billing_subscription_id,
           billing_subscription_status, billing_product_id
    from hosting_accounts where account_id = ${accountId}`;
  return row;
}

/** Writes the derived plan and billing state; the period only when the subscription carries one. */
export async function applyHostingBilling(
  tx: Queryable,
  accountId: string,
  next: { planCode: string; subscription: SubscriptionState | null },
): Promise<void> {
  const s = next.subscription;
  const hasPeriod =
    s?.currentPeriodStart != null && s.currentPeriodEnd != null && s.currentPeriodEnd > s.currentPeriodStart;
  await tx`
    update hosting_accounts set
      plan_code = ${next.planCode},
      billing_customer_id = coalesce(${s?.customerId ?? null}, billing_customer_id),
      billing_subscription_id = ${s?.id ?? null},
      billing_subscription_status = ${s ? (s.revoked ? 'revoked' : s.status) : null},
      billing_product_id = ${s?.productId ?? null},
      period_start = case when ${hasPeriod} then ${hasPeriod ? s!.currentPeriodStart : null}::timestamptz else period_start end,
      period_end = case when ${hasPeriod} then ${hasPeriod ? s!.currentPeriodEnd : null}::timestamptz else period_end end,
      period_anchor = case when ${hasPeriod} then ${hasPeriod ? s!.currentPeriodStart : null}::timestamptz else period_anchor end
    where account_id = ${accountId}`;
}
