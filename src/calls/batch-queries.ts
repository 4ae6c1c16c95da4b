import type { Sql, TransactionSql } from '../db/index.js';
import type { VoicemailRule } from './queries.js';

type Db = Sql | TransactionSql;

export type BatchStatus = 'running' | 'paused' | 'canceled' | 'completed';

export interface RetryRule {
  onNoAnswer: boolean;
  onBusy: boolean;
  /** Total tries per contact. */
  attempts: number;
  afterMinutes: number;
}

export interface CallWindow {
  /** 0 = Sunday ... 6 = Saturday. */
  days: number[];
  /** HH:MM, local to `timezone`. */
  start: string;
  end: string;
  timezone: string;
}

export interface BatchRow {
  id: string;
  accountId: string;
  assistantId: string;
  phoneNumberId: string | null;
  fromNumber: string;
  status: BatchStatus;
  maxConcurrent: number;
  reservedInbound: number;
  retry: RetryRule;
  callWindow: CallWindow | null;
  voicemail: VoicemailRule | null;
  publicBase: string;
  total: number;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

export interface ContactRow {
  batchId: string;
  seq: number;
  toNumber: string;
  variables: Record<string, string>;
  status: 'pending' | 'calling' | 'done';
  attempts: number;
  callId: string | null;
  outcome: string | null;
}

const COLUMNS =
  'id, account_id, assistant_id, phone_number_id, from_number, status, max_concurrent, reserved_inbound, retry, ' +
  'call_window, voicemail, public_base, total, created_at, updated_at, completed_at';

export async function insertBatch(
  tx: TransactionSql,
  row: Omit<BatchRow, 'status' | 'createdAt' | 'updatedAt' | 'completedAt'>,
  contacts: { to: string; variables?: Record<string, string> | undefined }[],
): Promise<BatchRow> {
  const [created] = await tx<BatchRow[]>`
    insert into call_batches (id, account_id, assistant_id, phone_number_id, from_number, status, max_concurrent,
      reserved_inbound, retry, call_window, voicemail, public_base, total)
    values (${row.id}, ${row.accountId}, ${row.assistantId}, ${row.phoneNumberId}, ${row.fromNumber}, 'running',
      ${row.maxConcurrent}, ${row.reservedInbound}, ${tx.json(row.retry as never)},
      ${row.callWindow === null ? null : tx.json(row.callWindow as never)},
      ${row.voicemail === null ? null : tx.json(row.voicemail as never)}, ${row.publicBase}, ${row.total})
    returning ${tx.unsafe(COLUMNS)}`;
  for (let start = 0; start < contacts.length; start += 1000) {
    const chunk = contacts.slice(start, start + 1000).map((c) => ({ to: c.to, variables: c.variables ?? {} }));
    await tx`
      insert into call_batch_contacts (batch_id, seq, to_number, variables)
      select ${row.id}, (e.ord - 1 + ${start})::int, e.value->>'to', e.value->'variables'
      from jsonb_array_elements(${tx.json(chunk as never)}) with ordinality as e(value, ord)`;
  }
  return created!;
}

export async function findBatch(sql: Db, accountId: string, id: string): Promise<BatchRow | undefined> {
  const [row] = await sql<BatchRow[]>`
    select ${sql.unsafe(COLUMNS)} from call_batches where id = ${id} and account_id = ${accountId}`;
  return row;
}

export async function listBatches(sql: Db, accountId: string): Promise<BatchRow[]> {
  return sql<BatchRow[]>`
    select ${sql.unsafe(COLUMNS)} from call_batches where account_id = ${accountId}
    order by created_at desc, id desc limit 100`;
}

export interface Progress {
  pending: number;
  calling: number;
  done: number;
  byOutcome: Record<string, number>;
}

export async function progressOf(sql: Db, batchId: string): Promise<Progress> {
  const rows = await sql<{ status: string; outcome: string | null; n: number }[]>`
    select status, outcome, count(*)::int as n from call_batch_contacts where batch_id = ${batchId}
    group by status, outcome`;
  const progress: Progress = { pending: 0, calling: 0, done: 0, byOutcome: {} };
  for (const r of rows) {
    if (r.status === 'pending') progress.pending += r.n;
    else if (r.status === 'calling') progress.calling += r.n;
    else progress.done += r.n;
    if (r.status === 'done' && r.outcome !== null)
      progress.byOutcome[r.outcome] = (progress.byOutcome[r.outcome] ?? 0) + r.n;
  }
  return progress;
}

/** Moves a batch from one of `from` to `to`; undefined when it was in none of them. */
export async function setBatchStatus(
  sql: Db,
  accountId: string,
  id: string,
  from: BatchStatus[],
  to: BatchStatus,
): Promise<BatchRow | undefined> {
  const [row] = await sql<BatchRow[]>`
    update call_batches set status = ${to}, updated_at = now(),
      completed_at = ${to === 'canceled' || to === 'completed' ? sql`now()` : sql`completed_at`}
    where id = ${id} and account_id = ${accountId} and status in ${sql(from)}
    returning ${sql.unsafe(COLUMNS)}`;
  return row;
}

/** The contacts not yet called are done, `canceled`. */
export async function cancelPending(sql: Db, batchId: string): Promise<void> {
  await sql`update call_batch_contacts set status = 'done', outcome = 'canceled'
    where batch_id = ${batchId} and status = 'pending'`;
}

export async function runningBatchIds(sql: Db, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from call_batches where status = 'running' order by updated_at limit ${limit}`;
  return rows.map((r) => r.id);
}

/** The batch, if running and no other instance is working on it right now. */
export async function lockRunningBatch(tx: TransactionSql, id: string): Promise<BatchRow | undefined> {
  const [row] = await tx<BatchRow[]>`
    select ${tx.unsafe(COLUMNS)} from call_batches where id = ${id} and status = 'running' for update skip locked`;
  return row;
}

export async function openContacts(tx: Db, batchId: string): Promise<{ pending: number; calling: number }> {
  const [row] = await tx<{ pending: number; calling: number }[]>`
    select count(*) filter (where status = 'pending')::int as pending,
           count(*) filter (where status = 'calling')::int as calling
    from call_batch_contacts where batch_id = ${batchId} and status <> 'done'`;
  return row ?? { pending: 0, calling: 0 };
}

/** Claims up to `n` contacts due now, in order: each one's attempt is counted as it is claimed. */
export async function claimContacts(tx: TransactionSql, batchId: string, n: number): Promise<ContactRow[]> {
  return tx<ContactRow[]>`
    update call_batch_contacts set status = 'calling', attempts = attempts + 1
    where batch_id = ${batchId} and seq in (
      select seq from call_batch_contacts
      where batch_id = ${batchId} and status = 'pending' and next_attempt_at <= now()
      order by seq limit ${n} for update skip locked)
    returning batch_id, seq, to_number, variables, status, attempts, call_id, outcome`;
}

export async function setContactCall(tx: Db, batchId: string, seq: number, callId: string): Promise<void> {
  await tx`update call_batch_contacts set call_id = ${callId} where batch_id = ${batchId} and seq = ${seq}`;
}

/**
 * The contact's call ended with `outcome`: tried again after the batch's pause when the rule says so and tries are
 * left, else done.
 */
export async function settleContact(tx: Db, batchId: string, seq: number, outcome: string): Promise<void> {
  const [row] = await tx<{ retry: RetryRule; attempts: number; batchStatus: string }[]>`
    select b.retry, c.attempts, b.status as batch_status from call_batch_contacts c
    join call_batches b on b.id = c.batch_id
    where c.batch_id = ${batchId} and c.seq = ${seq} for update of c`;
  if (row === undefined) return;
  const retryable = (outcome === 'no_answer' && row.retry.onNoAnswer) || (outcome === 'busy' && row.retry.onBusy);
  const again = retryable && row.attempts < row.retry.attempts && row.batchStatus !== 'canceled';
  await tx`
    update call_batch_contacts set
      status = ${again ? 'pending' : 'done'},
      outcome = ${outcome},
      next_attempt_at = now() + make_interval(mins => ${again ? row.retry.afterMinutes : 0})
    where batch_id = ${batchId} and seq = ${seq}`;
}

/** Completes a running batch with no contact left to call; the batch when it did. */
export async function completeIfDone(tx: Db, batchId: string): Promise<BatchRow | undefined> {
  const [row] = await tx<BatchRow[]>`
    update call_batches set status = 'completed', completed_at = now(), updated_at = now()
    where id = ${batchId} and status = 'running'
      and not exists (select 1 from call_batch_contacts where batch_id = ${batchId} and status <> 'done')
    returning ${tx.unsafe(COLUMNS)}`;
  return row;
}

export async function touchBatch(tx: Db, batchId: string): Promise<void> {
  await tx`update call_batches set updated_at = now() where id = ${batchId}`;
}
