import type { Sql, TransactionSql } from '../db/index.js';
import type { CallStatus } from './status.js';

type Db = Sql | TransactionSql;

export type VoicemailRule = { action: 'hangup' } | { action: 'message'; message: string };

export interface CallRow {
  id: string;
  accountId: string;
  assistantId: string;
  phoneNumberId: string | null;
  toNumber: string;
  fromNumber: string;
  status: CallStatus;
  carrierCallId: string | null;
  answeredBy: string | null;
  outcome: string | null;
  voicemail: VoicemailRule | null;
  variables: Record<string, string>;
  metadata: Record<string, unknown>;
  maxDurationSeconds: number | null;
  publicBase: string;
  voiceSessionId: string | null;
  conversationId: string | null;
  failure: string | null;
  createdAt: Date;
  updatedAt: Date;
  answeredAt: Date | null;
  endedAt: Date | null;
  /** The batch (and its contact) the call was placed for; null for a single call. */
  batchId: string | null;
  batchSeq: number | null;
  transferredTo: string | null;
  transferredAt: Date | null;
}

const COLUMNS =
  'id, account_id, assistant_id, phone_number_id, to_number, from_number, status, carrier_call_id, answered_by, ' +
  'outcome, voicemail, variables, metadata, max_duration_seconds, public_base, voice_session_id, conversation_id, ' +
  'failure, created_at, updated_at, answered_at, ended_at, batch_id, batch_seq, ' +
  'transferred_to, transferred_at';

export async function insertCall(
  sql: Db,
  row: Pick<
    CallRow,
    | 'id'
    | 'accountId'
    | 'assistantId'
    | 'phoneNumberId'
    | 'toNumber'
    | 'fromNumber'
    | 'voicemail'
    | 'variables'
    | 'metadata'
    | 'maxDurationSeconds'
    | 'publicBase'
  > &
    Partial<Pick<CallRow, 'batchId' | 'batchSeq'>>,
): Promise<CallRow> {
  const [created] = await sql<CallRow[]>`
    insert into outbound_calls (id, account_id, assistant_id, phone_number_id, to_number, from_number, status, voicemail,
      variables, metadata, max_duration_seconds, public_base, batch_id, batch_seq)
    values (${row.id}, ${row.accountId}, ${row.assistantId}, ${row.phoneNumberId}, ${row.toNumber}, ${row.fromNumber},
      'queued', ${row.voicemail === null ? null : sql.json(row.voicemail)}, ${sql.json(row.variables)},
      ${sql.json(row.metadata as Record<string, never>)}, ${row.maxDurationSeconds}, ${row.publicBase},
      ${row.batchId ?? null}, ${row.batchSeq ?? null})
    returning ${sql.unsafe(COLUMNS)}`;
  return created!;
}

export async function findCall(sql: Db, accountId: string, id: string): Promise<CallRow | undefined> {
  const [row] = await sql<CallRow[]>`
    select ${sql.unsafe(COLUMNS)} from outbound_calls where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** A call by id alone, locked for the change a carrier callback makes (inside a transaction). */
export async function lockCall(tx: TransactionSql, id: string): Promise<CallRow | undefined> {
  const [row] = await tx<CallRow[]>`select ${tx.unsafe(COLUMNS)} from outbound_calls where id = ${id} for update`;
  return row;
}

export async function callById(sql: Db, id: string): Promise<CallRow | undefined> {
  const [row] = await sql<CallRow[]>`select ${sql.unsafe(COLUMNS)} from outbound_calls where id = ${id}`;
  return row;
}

/** The call whose assistant part is this voice session (the built-in transfer_call tool). */
export async function callBySession(sql: Db, voiceSessionId: string): Promise<CallRow | undefined> {
  const [row] = await sql<CallRow[]>`
    select ${sql.unsafe(COLUMNS)} from outbound_calls where voice_session_id = ${voiceSessionId}`;
  return row;
}

export interface CallFilter {
  accountId: string;
  status?: CallStatus | undefined;
  assistantId?: string | undefined;
  to?: string | undefined;
  batchId?: string | undefined;
  before?: { createdAt: Date; id: string } | undefined;
  limit: number;
}

export async function listCalls(sql: Db, f: CallFilter): Promise<CallRow[]> {
  return sql<CallRow[]>`
    select ${sql.unsafe(COLUMNS)} from outbound_calls
    where account_id = ${f.accountId}
      ${f.status === undefined ? sql`` : sql`and status = ${f.status}`}
      ${f.assistantId === undefined ? sql`` : sql`and assistant_id = ${f.assistantId}`}
      ${f.to === undefined ? sql`` : sql`and to_number = ${f.to}`}
      ${f.batchId === undefined ? sql`` : sql`and batch_id = ${f.batchId}`}
      ${f.before === undefined ? sql`` : sql`and (created_at, id) < (${f.before.createdAt}, ${f.before.id})`}
    order by created_at desc, id desc limit ${f.limit}`;
}

/** Calls of the account placed and not answered yet (they hold no voice grant, but will). */
export async function countRingingCalls(sql: Db, accountId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from outbound_calls
    where account_id = ${accountId} and status in ('queued', 'ringing')`;
  return row?.n ?? 0;
}

export async function setCarrierCallId(sql: Db, id: string, carrierCallId: string): Promise<void> {
  await sql`update outbound_calls set carrier_call_id = ${carrierCallId}, updated_at = now() where id = ${id}`;
}

export interface CallChange {
  status?: CallStatus;
  answeredBy?: string | null;
  outcome?: string | null;
  voiceSessionId?: string;
  conversationId?: string;
  failure?: string;
  answered?: boolean;
  ended?: boolean;
}

export async function updateCall(tx: Db, id: string, change: CallChange): Promise<CallRow> {
  const [row] = await tx<CallRow[]>`
    update outbound_calls set
      status = coalesce(${change.status ?? null}, status),
      answered_by = ${change.answeredBy === undefined ? tx`answered_by` : change.answeredBy},
      outcome = ${change.outcome === undefined ? tx`outcome` : change.outcome},
      voice_session_id = coalesce(${change.voiceSessionId ?? null}, voice_session_id),
      conversation_id = coalesce(${change.conversationId ?? null}, conversation_id),
      failure = coalesce(${change.failure ?? null}, failure),
      answered_at = ${change.answered === true ? tx`coalesce(answered_at, now())` : tx`answered_at`},
      ended_at = ${change.ended === true ? tx`coalesce(ended_at, now())` : tx`ended_at`},
      updated_at = now()
    where id = ${id}
    returning ${tx.unsafe(COLUMNS)}`;
  return row!;
}

/** Calls of a batch stored but never handed to the carrier (the instance placing them stopped): older than `seconds`. */
export async function unplacedBatchCalls(sql: Db, seconds: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from outbound_calls
    where batch_id is not null and status = 'queued' and carrier_call_id is null
      and created_at < now() - make_interval(secs => ${seconds})
    limit 100`;
  return rows.map((r) => r.id);
}

/** The live call was handed to `to` (a cold transfer). */
export async function setTransferred(sql: Db, id: string, to: string): Promise<void> {
  await sql`update outbound_calls set transferred_to = ${to}, transferred_at = now(), updated_at = now() where id = ${id}`;
}
