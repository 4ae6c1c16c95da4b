import type { Sql, TransactionSql } from '../db/index.js';
import type { PassageSource } from '../retrieval/index.js';

type Db = Sql | TransactionSql;

export type EvalStatus = 'queued' | 'running' | 'done' | 'failed';
export type CaseOutcome = 'answered' | 'no_answer' | 'model_failure';

/** A case's cited document, stored as retrieval gives it. */
export type StoredCaseSource = PassageSource;

/** An eval with the aggregates of its cases. */
export interface EvalRow {
  id: string;
  assistantId: string;
  accountId: string;
  status: EvalStatus;
  caseCount: number;
  completedCount: number;
  averageScore: number | null;
  costMicros: number;
  errorCode: string | null;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface CaseRow {
  ordinal: number;
  question: string;
  expected: string | null;
  answer: string | null;
  sources: StoredCaseSource[];
  outcome: CaseOutcome | null;
  score: number | null;
  provider: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  error: string | null;
  completedAt: Date | null;
}

export async function insertEval(
  sql: Db,
  row: {
    id: string;
    assistantId: string;
    accountId: string;
    cases: Array<{ question: string; expected: string | null }>;
  },
): Promise<void> {
  await sql`
    insert into evals (id, assistant_id, account_id, case_count)
    values (${row.id}, ${row.assistantId}, ${row.accountId}, ${row.cases.length})`;
  const cases = row.cases.map((c, ordinal) => ({
    evalId: row.id,
    ordinal,
    question: c.question,
    expected: c.expected,
  }));
  await sql`insert into eval_cases ${sql(cases, 'evalId', 'ordinal', 'question', 'expected')}`;
}

/** The eval of this assistant with its case aggregates (cost and average score over finished cases). */
export async function findEval(sql: Db, assistantId: string, id: string): Promise<EvalRow | undefined> {
  const [row] = await sql<EvalRow[]>`
    select e.id, e.assistant_id, e.account_id, e.status, e.case_count, e.error_code, e.error, e.created_at, e.started_at, e.finished_at,
           count(c.completed_at)::int8 as completed_count,
           avg(c.score) filter (where c.completed_at is not null) as average_score,
           coalesce(sum(c.cost_micros) filter (where c.completed_at is not null), 0)::int8 as cost_micros
    from evals e left join eval_cases c on c.eval_id = e.id
    where e.id = ${id} and e.assistant_id = ${assistantId}
    group by e.id`;
  return row;
}

export async function listCases(sql: Db, evalId: string): Promise<CaseRow[]> {
  return sql<CaseRow[]>`
    select ordinal, question, expected, answer, sources, outcome, score, provider, model, input_tokens, output_tokens, cost_micros, error, completed_at
    from eval_cases where eval_id = ${evalId} order by ordinal`;
}

// ---- the runner's queue -------------------------------------------------------------------------------------

export interface ClaimedEval {
  id: string;
  assistantId: string;
  accountId: string;
  attempts: number;
  maxAttempts: number;
}

/**
 * Claims the oldest queued eval, or a running one whose lease expired (its runner died). SKIP LOCKED lets many
 * runners poll one table without waiting on each other; a fresh lease token fences the previous holder.
 */
export async function claimEval(sql: Db, leaseToken: string, leaseMs: number): Promise<ClaimedEval | undefined> {
  const [row] = await sql<ClaimedEval[]>`
    update evals set status = 'running', attempts = attempts + 1, lease_token = ${leaseToken},
      locked_until = now() + make_interval(secs => ${leaseMs / 1000}), started_at = coalesce(started_at, now())
    where id = (
      select id from evals
      where status = 'queued' or (status = 'running' and (locked_until is null or locked_until < now()))
      order by created_at, id
      limit 1
      for update skip locked)
    returning id, assistant_id, account_id, attempts, max_attempts`;
  return row;
}

/** Extends the lease while the eval runs; false when it was lost (expired and claimed by another runner). */
export async function renewLease(sql: Db, id: string, leaseToken: string, leaseMs: number): Promise<boolean> {
  const rows = await sql`
    update evals set locked_until = now() + make_interval(secs => ${leaseMs / 1000})
    where id = ${id} and lease_token = ${leaseToken} and status = 'running' returning id`;
  return rows.length > 0;
}

/** Inside a transaction: locks the eval row if this token still holds it (writes after this are fenced). */
export async function holdsLease(sql: Db, id: string, leaseToken: string): Promise<boolean> {
  const rows =
    await sql`select 1 from evals where id = ${id} and lease_token = ${leaseToken} and status = 'running' for update`;
  return rows.length > 0;
}

export interface PendingCase {
  ordinal: number;
  question: string;
  expected: string | null;
  /** The case's usage reservation from an interrupted run, settled instead of opening a new one. */
  reservationId: string | null;
}

export async function pendingCases(sql: Db, evalId: string): Promise<PendingCase[]> {
  return sql<PendingCase[]>`
    select ordinal, question, expected, reservation_id from eval_cases
    where eval_id = ${evalId} and completed_at is null order by ordinal`;
}

export async function setCaseReservation(
  sql: Db,
  evalId: string,
  ordinal: number,
  reservationId: string,
): Promise<void> {
  await sql`update eval_cases set reservation_id = ${reservationId} where eval_id = ${evalId} and ordinal = ${ordinal}`;
}

export interface CaseResult {
  answer: string;
  sources: StoredCaseSource[];
  outcome: CaseOutcome;
  score: number | null;
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  error: string | null;
}

export async function completeCase(sql: Db, evalId: string, ordinal: number, r: CaseResult): Promise<void> {
  await sql`
    update eval_cases set answer = ${r.answer}, sources = ${sql.json(r.sources as never)}, outcome = ${r.outcome}, score = ${r.score},
      provider = ${r.provider}, model = ${r.model}, input_tokens = ${r.inputTokens}, output_tokens = ${r.outputTokens},
      cost_micros = ${r.costMicros}, error = ${r.error}, completed_at = now()
    where eval_id = ${evalId} and ordinal = ${ordinal}`;
}

/** Ends the run: done, or failed with a code and an owner-facing message. Fenced by the lease token. */
export async function finishEval(
  sql: Db,
  id: string,
  leaseToken: string,
  end: { status: 'done' } | { status: 'failed'; errorCode: string; error: string },
): Promise<boolean> {
  const rows = await sql`
    update evals set status = ${end.status}, lease_token = null, locked_until = null, finished_at = now(),
      error_code = ${end.status === 'failed' ? end.errorCode : null}, error = ${end.status === 'failed' ? end.error : null}
    where id = ${id} and lease_token = ${leaseToken} returning id`;
  return rows.length > 0;
}

/** Shutdown: back to queued for any runner to resume; the interrupted claim does not count as an attempt. */
export async function requeueEval(sql: Db, id: string, leaseToken: string): Promise<boolean> {
  const rows = await sql`
    update evals set status = 'queued', lease_token = null, locked_until = null, attempts = greatest(attempts - 1, 0)
    where id = ${id} and lease_token = ${leaseToken} and status = 'running' returning id`;
  return rows.length > 0;
}
