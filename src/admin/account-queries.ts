import type postgres from 'postgres';

/** A client or a transaction (admin changes run inside one with their audit row). */
type Queryable = postgres.ISql<Record<string, never>>;

/** One hosting account as operators see it: identity, plan, period, spend of the stored period, billing ids. */
export interface AdminAccountRow {
  id: string;
  name: string | null;
  ownerEmail: string;
  accountStatus: string;
  status: string;
  planCode: string;
  periodStart: Date;
  periodEnd: Date;
  limitOverrideMicros: number | null;
  consumedMicros: number;
  reservedMicros: number;
  creditMicros: number;
  requestCount: number;
  billingSubscriptionId: string | null;
  billingSubscriptionStatus: string | null;
  createdAt: Date;
}

const SELECT = `
  select a.id, a.name, u.email as owner_email, a.status as account_status, h.status, h.plan_code, h.period_start, h.period_end,
         h.limit_override_micros, coalesce(b.consumed_micros, 0)::int8 as consumed_micros,
         coalesce(b.reserved_micros, 0)::int8 as reserved_micros, coalesce(b.credit_micros, 0)::int8 as credit_micros,
         coalesce(b.request_count, 0)::int8 as request_count, h.billing_subscription_id, h.billing_subscription_status, a.created_at
  from hosting_accounts h
  join accounts a on a.id = h.account_id
  join users u on u.id = a.owner_user_id
  left join usage_balances b on b.account_id = h.account_id and b.period_start = h.period_start`;

/** Highest spend first (the stored period's consumed micros), then newest. */
export async function listAccounts(sql: Queryable, limit: number, offset: number): Promise<AdminAccountRow[]> {
  return sql<
    AdminAccountRow[]
  >`${sql.unsafe(SELECT)} order by consumed_micros desc, a.created_at desc, a.id limit ${limit} offset ${offset}`;
}

export async function findAccount(sql: Queryable, accountId: string): Promise<AdminAccountRow | undefined> {
  const [row] = await sql<AdminAccountRow[]>`${sql.unsafe(SELECT)} where h.account_id = ${accountId}`;
  return row;
}

export interface HostingSettings {
  status: string;
  planCode: string;
  limitOverrideMicros: number | null;
}

export async function lockHostingSettings(sql: Queryable, accountId: string): Promise<HostingSettings | undefined> {
  const [row] = await sql<HostingSettings[]>`
    select status, plan_code, limit_override_micros from hosting_accounts where account_id = ${accountId} for no key update`;
  return row;
}

export async function updateHostingSettings(sql: Queryable, accountId: string, next: HostingSettings): Promise<void> {
  await sql`
    update hosting_accounts set status = ${next.status}, plan_code = ${next.planCode}, limit_override_micros = ${next.limitOverrideMicros}
    where account_id = ${accountId}`;
}
