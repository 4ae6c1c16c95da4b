import type { Sql, TransactionSql } from '../db/index.js';

type Db = Sql | TransactionSql;

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'disabled';

export interface EndpointRow {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface DeliveryRow {
  id: string;
  messageId: string;
  endpointId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

// ---- endpoints ---------------------------------------------------------------------------------------------

export async function insertEndpoint(
  sql: Db,
  row: { id: string; accountId: string; url: string; events: string[]; description: string | null; sealed: string },
): Promise<EndpointRow> {
  const [created] = await sql<EndpointRow[]>`
    insert into webhook_endpoints (id, account_id, url, events, description, secret_sealed)
    values (${row.id}, ${row.accountId}, ${row.url}, ${sql.array(row.events)}, ${row.description}, ${row.sealed})
    returning *`;
  return created!;
}

export async function countEndpoints(sql: Db, accountId: string): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`select count(*)::int as n from webhook_endpoints where account_id = ${accountId}`;
  return row!.n;
}

export async function listEndpoints(sql: Db, accountId: string): Promise<EndpointRow[]> {
  return sql<EndpointRow[]>`
    select * from webhook_endpoints where account_id = ${accountId} order by created_at desc, id desc limit 100`;
}

export async function findEndpoint(sql: Db, accountId: string, id: string): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    select * from webhook_endpoints where id = ${id} and account_id = ${accountId}`;
  return row;
}

export async function findEndpointById(sql: Db, id: string): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`select * from webhook_endpoints where id = ${id}`;
  return row;
}

export async function updateEndpoint(
  sql: Db,
  accountId: string,
  id: string,
  patch: { url?: string; events?: string[]; description?: string | null; enabled?: boolean },
): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set
      url = coalesce(${patch.url ?? null}, url),
      events = coalesce(${patch.events ? sql.array(patch.events) : null}::text[], events),
      description = case when ${patch.description !== undefined} then ${patch.description ?? null} else description end,
      enabled = coalesce(${patch.enabled ?? null}, enabled),
      disabled_reason = case when ${patch.enabled !== undefined} then null else disabled_reason end
    where id = ${id} and account_id = ${accountId}
    returning *`;
  return row;
}

export async function deleteEndpoint(sql: Db, accountId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from webhook_endpoints where id = ${id} and account_id = ${accountId} returning id`;
  return rows.length > 0;
}

/** A new current secret; the old one keeps signing until `previousUntil`. */
export async function rotateSecret(
  sql: Db,
  accountId: string,
  id: string,
  sealed: string,
  previousSealed: string,
  previousUntil: Date,
): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set secret_sealed = ${sealed}, previous_secret_sealed = ${previousSealed},
      previous_secret_expires_at = ${previousUntil}
    where id = ${id} and account_id = ${accountId}
    returning *`;
  return row;
}

// ---- the outbox --------------------------------------------------------------------------------------------

/**
 * One message for every enabled endpoint of the account subscribed to `eventType`, in one statement (so inside or
 * outside a transaction it is all or nothing). Nothing is written when no endpoint wants it. Returns the deliveries.
 */
export async function enqueueForSubscribers(
  sql: Db,
  message: { id: string; accountId: string; eventType: string; body: string },
): Promise<number> {
  const rows = await sql`
    with targets as (
      select id from webhook_endpoints
      where account_id = ${message.accountId} and enabled and ${message.eventType} = any (events)
    ), msg as (
      insert into webhook_messages (id, account_id, event_type, body)
      select ${message.id}, ${message.accountId}, ${message.eventType}, ${message.body}
      where exists (select 1 from targets)
      returning id
    )
    insert into webhook_deliveries (id, message_id, endpoint_id, next_attempt_at)
    select 'whd_' || replace(gen_random_uuid()::text, '-', ''), msg.id, targets.id, now()
    from msg cross join targets
    returning id`;
  return rows.length;
}

/** One message to one endpoint whatever it subscribes to (webhook.test). Returns the delivery id. */
export async function enqueueForEndpoint(
  sql: Db,
  message: { id: string; accountId: string; eventType: string; body: string },
  endpointId: string,
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    with msg as (
      insert into webhook_messages (id, account_id, event_type, body)
      values (${message.id}, ${message.accountId}, ${message.eventType}, ${message.body})
      returning id
    )
    insert into webhook_deliveries (id, message_id, endpoint_id, next_attempt_at)
    select 'whd_' || replace(gen_random_uuid()::text, '-', ''), msg.id, ${endpointId}, now() from msg
    returning id`;
  return row!.id;
}

/** A replay: a new delivery of the same message (same webhook-id, same bytes) to the same endpoint. */
export async function replayDelivery(sql: Db, endpointId: string, deliveryId: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`
    insert into webhook_deliveries (id, message_id, endpoint_id, next_attempt_at)
    select 'whd_' || replace(gen_random_uuid()::text, '-', ''), message_id, endpoint_id, now()
    from webhook_deliveries where id = ${deliveryId} and endpoint_id = ${endpointId}
    returning id`;
  return row?.id;
}

const deliveryColumns = (sql: Db) => sql`
  d.id, d.message_id, d.endpoint_id, m.event_type, d.status, d.attempts, d.next_attempt_at, d.last_status_code,
  d.last_error, d.created_at, d.delivered_at`;

export async function findDelivery(sql: Db, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  const [row] = await sql<DeliveryRow[]>`
    select ${deliveryColumns(sql)} from webhook_deliveries d join webhook_messages m on m.id = d.message_id
    where d.id = ${id} and d.endpoint_id = ${endpointId}`;
  return row;
}

/** Newest first, keyset-paged on (created_at, id). */
export async function listDeliveries(
  sql: Db,
  endpointId: string,
  page: { limit: number; after?: { createdAt: Date; id: string } | undefined },
): Promise<DeliveryRow[]> {
  const after = page.after;
  return sql<DeliveryRow[]>`
    select ${deliveryColumns(sql)} from webhook_deliveries d join webhook_messages m on m.id = d.message_id
    where d.endpoint_id = ${endpointId}
      ${after ? sql`and (d.created_at, d.id) < (${after.createdAt}, ${after.id})` : sql``}
    order by d.created_at desc, d.id desc
    limit ${page.limit + 1}`;
}

// ---- the delivery worker -----------------------------------------------------------------------------------

export interface ClaimedDelivery {
  id: string;
  messageId: string;
  endpointId: string;
  attempts: number;
  body: string;
  accountId: string;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints under a lease, skipping rows another worker holds, and at
 * most `perEndpoint` in flight per endpoint (counting the leases already held; two workers claiming at the same
 * instant may each fill the bound, so the fleet-wide bound is instances × perEndpoint). Each claim is an attempt.
 */
export async function claimDue(
  sql: Db,
  options: { token: string; limit: number; perEndpoint: number; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  return sql<ClaimedDelivery[]>`
    with locked as (
      select d.id, d.endpoint_id, d.next_attempt_at from webhook_deliveries d
      join webhook_endpoints e on e.id = d.endpoint_id and e.enabled
      where d.status = 'pending' and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until <= now())
      order by d.next_attempt_at, d.id
      limit ${options.limit * 4}
      for update of d skip locked
    ), busy as (
      select endpoint_id, count(*)::int as n from webhook_deliveries
      where status = 'pending' and locked_until > now() and endpoint_id in (select endpoint_id from locked)
      group by endpoint_id
    ), ranked as (
      select l.id, row_number() over (partition by l.endpoint_id order by l.next_attempt_at, l.id) + coalesce(b.n, 0) as slot,
        row_number() over (order by l.next_attempt_at, l.id) as overall
      from locked l left join busy b on b.endpoint_id = l.endpoint_id
    ), chosen as (
      select id from ranked where slot <= ${options.perEndpoint} order by overall limit ${options.limit}
    ), claimed as (
      update webhook_deliveries d set attempts = d.attempts + 1, lease_token = ${options.token},
        locked_until = now() + ${options.leaseMs} * interval '1 millisecond'
      from chosen where d.id = chosen.id
      returning d.id, d.message_id, d.endpoint_id, d.attempts
    )
    select c.id, c.message_id, c.endpoint_id, c.attempts, m.body, e.account_id, e.url, e.secret_sealed,
      e.previous_secret_sealed, e.previous_secret_expires_at
    from claimed c join webhook_messages m on m.id = c.message_id join webhook_endpoints e on e.id = c.endpoint_id`;
}

/** 2xx: delivered (only by the lease holder). */
export async function markDelivered(sql: Db, id: string, token: string, status: number): Promise<boolean> {
  const rows = await sql`
    update webhook_deliveries set status = 'delivered', delivered_at = now(), last_status_code = ${status},
      last_error = null, next_attempt_at = null, lease_token = null, locked_until = null
    where id = ${id} and lease_token = ${token} and status = 'pending' returning id`;
  return rows.length > 0;
}

/** A failed attempt: due again at `nextAttemptAt`, or `failed` when the schedule ran out (null). */
export async function markAttemptFailed(
  sql: Db,
  id: string,
  token: string,
  outcome: { statusCode: number | null; error: string; nextAttemptAt: Date | null },
): Promise<boolean> {
  const rows = await sql`
    update webhook_deliveries set
      status = ${outcome.nextAttemptAt === null ? 'failed' : 'pending'},
      next_attempt_at = ${outcome.nextAttemptAt}, last_status_code = ${outcome.statusCode},
      last_error = ${outcome.error}, lease_token = null, locked_until = null
    where id = ${id} and lease_token = ${token} and status = 'pending' returning id`;
  return rows.length > 0;
}

/** 410 Gone: the endpoint is turned off and its pending deliveries with it (they stay replayable). */
export async function disableForGone(tx: TransactionSql, endpointId: string, deliveryId: string): Promise<void> {
  await tx`update webhook_endpoints set enabled = false, disabled_reason = 'gone' where id = ${endpointId}`;
  await tx`
    update webhook_deliveries set status = 'disabled', next_attempt_at = null, lease_token = null, locked_until = null,
      last_status_code = case when id = ${deliveryId} then 410 else last_status_code end,
      last_error = case when id = ${deliveryId} then 'the endpoint answered 410 Gone' else last_error end
    where endpoint_id = ${endpointId} and status = 'pending'`;
}

/** Shutdown mid-request: the attempt did not finish, so it is not counted; any worker may take it at once. */
export async function releaseClaim(sql: Db, id: string, token: string): Promise<void> {
  await sql`
    update webhook_deliveries set attempts = greatest(attempts - 1, 0), lease_token = null, locked_until = null
    where id = ${id} and lease_token = ${token} and status = 'pending'`;
}

/** Retention: messages older than `days` with no pending delivery go, with their deliveries. Resolves how many. */
export async function pruneMessages(sql: Db, days: number): Promise<number> {
  const rows = await sql`
    delete from webhook_messages m
    where m.created_at < now() - ${days} * interval '1 day'
      and not exists (select 1 from webhook_deliveries d where d.message_id = m.id and d.status = 'pending')
    returning m.id`;
  return rows.length;
}

// ---- event facts read from other capabilities' tables (read only) ------------------------------------------

export interface VoiceSessionFacts {
  id: string;
  accountId: string;
  conversationId: string | null;
  assistantId: string;
  source: string;
  /** The call's transport, as its timeline names it (a call without a timeline row: phone by source, else websocket). */
  transport: string;
  state: string;
  endReason: string | null;
  endedBy: string | null;
  durationSeconds: number | null;
  billableSeconds: number;
  costMicros: number;
}

/** What a voice session event reports: the session row and the cost its settled voice grants recorded. */
export async function voiceSessionFacts(sql: Db, sessionId: string): Promise<VoiceSessionFacts | undefined> {
  const [row] = await sql<VoiceSessionFacts[]>`
    select s.id, s.account_id, s.conversation_id, s.assistant_id, s.source, s.state, s.end_reason, s.ended_by,
      coalesce((select t.transport from voice_timelines t where t.session_id = s.id),
        case when s.source = 'phone' then 'phone' else 'websocket' end) as transport,
      case when s.ended_at is null then null
        else round(extract(epoch from (s.ended_at - coalesce(s.started_at, s.created_at))))::int end as duration_seconds,
      s.billable_seconds,
      coalesce((select sum(ev.cost_micros) from usage_reservations r join usage_events ev on ev.reservation_id = r.id
        where r.kind = 'voice' and r.voice_session_id = s.id), 0)::bigint as cost_micros
    from voice_sessions s where s.id = ${sessionId}`;
  return row;
}
