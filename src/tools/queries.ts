import type { Sql, TransactionSql } from '../db/index.js';

type Db = Sql | TransactionSql;

export interface ToolMessages {
  start?: string | undefined;
  delayed?: Array<{ afterMs: number; text: string }> | undefined;
  failed?: string | undefined;
}

export interface ToolRow {
  id: string;
  assistantId: string;
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  url: string;
  timeoutMs: number;
  mode: 'sync' | 'async';
  messages: ToolMessages;
  examples: string[];
  createdAt: Date;
  updatedAt: Date;
}

export type ToolFields = Omit<ToolRow, 'id' | 'assistantId' | 'createdAt' | 'updatedAt'>;

const COLUMNS =
  'id, assistant_id, name, description, parameters, url, timeout_ms, mode, messages, examples, created_at, updated_at';

/** Serialises creations per assistant (the count and name checks then see each other's rows). */
export async function lockAssistant(tx: TransactionSql, assistantId: string): Promise<void> {
  await tx`select id from assistants where id = ${assistantId} for update`;
}

export async function countTools(sql: Db, assistantId: string): Promise<number> {
  const [row] = await sql<Array<{ n: number }>>`
    select count(*)::int as n from assistant_tools where assistant_id = ${assistantId}`;
  return row?.n ?? 0;
}

export async function findByName(sql: Db, assistantId: string, name: string): Promise<ToolRow | undefined> {
  const [row] = await sql<ToolRow[]>`
    select ${sql.unsafe(COLUMNS)} from assistant_tools where assistant_id = ${assistantId} and name = ${name}`;
  return row;
}

export async function insertTool(sql: Db, id: string, assistantId: string, f: ToolFields): Promise<ToolRow> {
  const [row] = await sql<ToolRow[]>`
    insert into assistant_tools (id, assistant_id, name, description, parameters, url, timeout_ms, mode, messages, examples)
    values (${id}, ${assistantId}, ${f.name}, ${f.description}, ${sql.json(f.parameters as never)}, ${f.url},
            ${f.timeoutMs}, ${f.mode}, ${sql.json(f.messages as never)}, ${sql.json(f.examples as never)})
    returning ${sql.unsafe(COLUMNS)}`;
  return row!;
}

export async function listTools(sql: Db, assistantId: string): Promise<ToolRow[]> {
  return sql<ToolRow[]>`
    select ${sql.unsafe(COLUMNS)} from assistant_tools where assistant_id = ${assistantId} order by created_at, id`;
}

export async function findTool(sql: Db, assistantId: string, id: string): Promise<ToolRow | undefined> {
  const [row] = await sql<ToolRow[]>`
    select ${sql.unsafe(COLUMNS)} from assistant_tools where assistant_id = ${assistantId} and id = ${id}`;
  return row;
}

export async function updateTool(sql: Db, id: string, f: ToolFields): Promise<ToolRow | undefined> {
  const [row] = await sql<ToolRow[]>`
    update assistant_tools set name = ${f.name}, description = ${f.description},
      parameters = ${sql.json(f.parameters as never)}, url = ${f.url}, timeout_ms = ${f.timeoutMs}, mode = ${f.mode},
      messages = ${sql.json(f.messages as never)}, examples = ${sql.json(f.examples as never)}
    where id = ${id}
    returning ${sql.unsafe(COLUMNS)}`;
  return row;
}

export async function deleteTool(sql: Db, assistantId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from assistant_tools where assistant_id = ${assistantId} and id = ${id} returning id`;
  return rows.length > 0;
}

export interface SecretRow {
  assistantId: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
}

export async function findSecret(sql: Db, assistantId: string): Promise<SecretRow | undefined> {
  const [row] = await sql<SecretRow[]>`
    select assistant_id, secret_sealed, previous_secret_sealed, previous_secret_expires_at
    from assistant_tool_secrets where assistant_id = ${assistantId}`;
  return row;
}

/** Stores the first secret; false when the assistant already has one (nothing changes then). */
export async function insertSecret(sql: Db, assistantId: string, sealed: string): Promise<boolean> {
  const rows = await sql`
    insert into assistant_tool_secrets (assistant_id, secret_sealed) values (${assistantId}, ${sealed})
    on conflict (assistant_id) do nothing returning assistant_id`;
  return rows.length > 0;
}

/** The current secret becomes the previous one (signing until `previousExpiresAt`); `sealed` is the new current. */
export async function rotateSecret(
  sql: Db,
  assistantId: string,
  sealed: string,
  previousSealed: string,
  previousExpiresAt: Date,
): Promise<boolean> {
  const rows = await sql`
    update assistant_tool_secrets set secret_sealed = ${sealed}, previous_secret_sealed = ${previousSealed},
      previous_secret_expires_at = ${previousExpiresAt}
    where assistant_id = ${assistantId} returning assistant_id`;
  return rows.length > 0;
}

/** The account an assistant belongs to (a tool.failed event is queued for it). */
export async function accountOfAssistant(sql: Db, assistantId: string): Promise<string | undefined> {
  const [row] = await sql<Array<{ accountId: string }>>`select account_id from assistants where id = ${assistantId}`;
  return row?.accountId;
}

/** Calls, failures and the owner's time (p50/p95 of finished calls) per tool name since `since`. */
export async function toolAnalytics(sql: Db, assistantId: string, since: Date) {
  const rows = await sql<
    Array<{ name: string; calls: number; errors: number; p50Ms: number | null; p95Ms: number | null }>
  >`
    select name, count(*)::int as calls, (count(*) filter (where status = 'failed'))::int as errors,
      percentile_cont(0.5) within group (order by duration_ms) filter (where status <> 'pending') as p50_ms,
      percentile_cont(0.95) within group (order by duration_ms) filter (where status <> 'pending') as p95_ms
    from tool_calls where assistant_id = ${assistantId} and created_at >= ${since}
    group by name order by name`;
  return rows.map((r) => ({
    ...r,
    p50Ms: r.p50Ms === null ? null : Math.round(Number(r.p50Ms)),
    p95Ms: r.p95Ms === null ? null : Math.round(Number(r.p95Ms)),
  }));
}
