import type { Sql, TransactionSql } from '../db/index.js';
import type {
  Expectation,
  ResultFigures,
  RunFigures,
  ScenarioTransport,
  ToolMock,
  TranscriptEntry,
  Turn,
  Verdict,
} from './schemas.js';

type Db = Sql | TransactionSql;

export interface ScenarioRow {
  id: string;
  assistantId: string;
  name: string;
  transport: ScenarioTransport;
  turns: Turn[];
  expect: Expectation[];
  toolMocks: ToolMock[];
  createdAt: Date;
  updatedAt: Date;
}

export type ScenarioFields = Pick<ScenarioRow, 'name' | 'transport' | 'turns' | 'expect' | 'toolMocks'>;

const COLUMNS = 'id, assistant_id, name, transport, turns, expect, tool_mocks, created_at, updated_at';

/** Serialises creations per assistant (the count and name checks then see each other's rows). */
export async function lockAssistant(tx: TransactionSql, assistantId: string): Promise<void> {
  await tx`select id from assistants where id = ${assistantId} for update`;
}

export async function countScenarios(sql: Db, assistantId: string): Promise<number> {
  const [row] = await sql<Array<{ n: number }>>`
    select count(*)::int as n from scenarios where assistant_id = ${assistantId}`;
  return row?.n ?? 0;
}

export async function findByName(sql: Db, assistantId: string, name: string): Promise<ScenarioRow | undefined> {
  const [row] = await sql<ScenarioRow[]>`
    select ${sql.unsafe(COLUMNS)} from scenarios where assistant_id = ${assistantId} and name = ${name}`;
  return row;
}

export async function findScenario(sql: Db, assistantId: string, id: string): Promise<ScenarioRow | undefined> {
  const [row] = await sql<ScenarioRow[]>`
    select ${sql.unsafe(COLUMNS)} from scenarios where assistant_id = ${assistantId} and id = ${id}`;
  return row;
}

export async function listScenarios(sql: Db, assistantId: string): Promise<ScenarioRow[]> {
  return sql<ScenarioRow[]>`
    select ${sql.unsafe(COLUMNS)} from scenarios where assistant_id = ${assistantId} order by created_at, id`;
}

export async function insertScenario(
  sql: Db,
  id: string,
  assistantId: string,
  f: ScenarioFields,
): Promise<ScenarioRow> {
  const [row] = await sql<ScenarioRow[]>`
    insert into scenarios (id, assistant_id, name, transport, turns, expect, tool_mocks)
    values (${id}, ${assistantId}, ${f.name}, ${f.transport}, ${sql.json(f.turns as never)},
            ${sql.json(f.expect as never)}, ${sql.json(f.toolMocks as never)})
    returning ${sql.unsafe(COLUMNS)}`;
  return row!;
}

export async function updateScenario(sql: Db, id: string, f: ScenarioFields): Promise<ScenarioRow | undefined> {
  const [row] = await sql<ScenarioRow[]>`
    update scenarios set name = ${f.name}, transport = ${f.transport}, turns = ${sql.json(f.turns as never)},
           expect = ${sql.json(f.expect as never)}, tool_mocks = ${sql.json(f.toolMocks as never)}
    where id = ${id}
    returning ${sql.unsafe(COLUMNS)}`;
  return row;
}

export async function deleteScenario(sql: Db, assistantId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from scenarios where assistant_id = ${assistantId} and id = ${id} returning id`;
  return rows.length > 0;
}

/** A call's end reason (null while active, or when the caller ended it). */
export async function callEndReason(sql: Db, sessionId: string): Promise<string | null> {
  const [row] = await sql<Array<{ endReason: string | null }>>`
    select end_reason from voice_sessions where id = ${sessionId}`;
  return row?.endReason ?? null;
}

/** The assistant's document text, for the caller's recognizer model (as the local voice builds its own). */
export async function documentHints(sql: Db, assistantId: string, maxChars: number): Promise<string> {
  const rows = await sql<Array<{ hints: string | null }>>`
    select left(string_agg(content, E'\n' order by document_id, ordinal), ${maxChars}) as hints
    from (select document_id, ordinal, content from document_chunks where assistant_id = ${assistantId}
          order by document_id, ordinal limit 2000) c`;
  return rows[0]?.hints ?? '';
}

// ---- runs -----------------------------------------------------------------------------------------------------

export type RunStatus = 'running' | 'done' | 'failed';
export type ResultStatus = 'pending' | 'running' | 'passed' | 'failed' | 'error';

export interface RunRow {
  id: string;
  assistantId: string;
  accountId: string;
  status: RunStatus;
  concurrency: number;
  scenarioCount: number;
  completedCount: number;
  figures: RunFigures | null;
  errorCode: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface ResultRow {
  ordinal: number;
  scenarioId: string | null;
  scenario: ScenarioFields;
  status: ResultStatus;
  conversationId: string | null;
  transcript: TranscriptEntry[];
  verdicts: Verdict[];
  figures: ResultFigures;
  error: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

const RUN_COLUMNS = `r.id, r.assistant_id, r.account_id, r.status, r.concurrency, r.scenario_count, r.figures, r.error_code,
  r.created_at, r.finished_at,
  (select count(*)::int from scenario_results s where s.run_id = r.id and s.finished_at is not null) as completed_count`;

export async function insertRun(
  tx: TransactionSql,
  run: { id: string; assistantId: string; accountId: string; concurrency: number; scenarios: ScenarioRow[] },
): Promise<void> {
  await tx`
    insert into scenario_runs (id, assistant_id, account_id, concurrency, scenario_count)
    values (${run.id}, ${run.assistantId}, ${run.accountId}, ${run.concurrency}, ${run.scenarios.length})`;
  const rows = run.scenarios.map((s, ordinal) => ({
    runId: run.id,
    ordinal,
    scenarioId: s.id,
    scenario: tx.json({
      name: s.name,
      transport: s.transport,
      turns: s.turns,
      expect: s.expect,
      toolMocks: s.toolMocks,
    } as never),
  }));
  await tx`insert into scenario_results ${tx(rows, 'runId', 'ordinal', 'scenarioId', 'scenario')}`;
}

export async function findRun(sql: Db, assistantId: string, id: string): Promise<RunRow | undefined> {
  const [row] = await sql<RunRow[]>`
    select ${sql.unsafe(RUN_COLUMNS)} from scenario_runs r where r.id = ${id} and r.assistant_id = ${assistantId}`;
  return row;
}

export async function listRuns(sql: Db, assistantId: string, limit: number): Promise<RunRow[]> {
  return sql<RunRow[]>`
    select ${sql.unsafe(RUN_COLUMNS)} from scenario_runs r where r.assistant_id = ${assistantId}
    order by r.created_at desc, r.id desc limit ${limit}`;
}

const RESULT_COLUMNS =
  'ordinal, scenario_id, scenario, status, conversation_id, transcript, verdicts, figures, error, started_at, finished_at';

export async function listResults(sql: Db, runId: string): Promise<ResultRow[]> {
  return sql<ResultRow[]>`
    select ${sql.unsafe(RESULT_COLUMNS)} from scenario_results where run_id = ${runId} order by ordinal`;
}

/** One scenario's latest results across runs, newest first (its history). */
export async function scenarioHistory(
  sql: Db,
  scenarioId: string,
  limit: number,
): Promise<Array<ResultRow & { runId: string; runCreatedAt: Date }>> {
  return sql<Array<ResultRow & { runId: string; runCreatedAt: Date }>>`
    select s.run_id, r.created_at as run_created_at, s.ordinal, s.scenario_id, s.scenario, s.status, s.conversation_id,
           s.transcript, s.verdicts, s.figures, s.error, s.started_at, s.finished_at
    from scenario_results s join scenario_runs r on r.id = s.run_id
    where s.scenario_id = ${scenarioId}
    order by r.created_at desc, r.id desc limit ${limit}`;
}

export async function startResult(sql: Db, runId: string, ordinal: number): Promise<void> {
  await sql`
    update scenario_results set status = 'running', started_at = now()
    where run_id = ${runId} and ordinal = ${ordinal}`;
}

export async function finishResult(
  sql: Db,
  runId: string,
  ordinal: number,
  r: Pick<ResultRow, 'status' | 'conversationId' | 'transcript' | 'verdicts' | 'figures' | 'error'>,
): Promise<void> {
  await sql`
    update scenario_results
    set status = ${r.status}, conversation_id = ${r.conversationId}, transcript = ${sql.json(r.transcript as never)},
        verdicts = ${sql.json(r.verdicts as never)}, figures = ${sql.json(r.figures as never)}, error = ${r.error},
        finished_at = now()
    where run_id = ${runId} and ordinal = ${ordinal}`;
}

/** Ends a run once (a run already ended is left as it is). */
export async function finishRun(
  sql: Db,
  id: string,
  end: { status: Exclude<RunStatus, 'running'>; figures: RunFigures | null; errorCode: string | null },
): Promise<boolean> {
  const rows = await sql`
    update scenario_runs set status = ${end.status}, figures = ${end.figures === null ? null : sql.json(end.figures as never)},
           error_code = ${end.errorCode}, finished_at = now()
    where id = ${id} and status = 'running' returning id`;
  return rows.length > 0;
}

/** Results of a run that never finished are closed as errors (the run was interrupted). */
export async function closeUnfinishedResults(sql: Db, runId: string, error: string): Promise<void> {
  await sql`
    update scenario_results set status = 'error', error = ${error}, finished_at = now()
    where run_id = ${runId} and finished_at is null`;
}
