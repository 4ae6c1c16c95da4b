import { z } from 'zod';
import type { Sql, TransactionSql } from '../db/index.js';

type Db = Sql | TransactionSql;

/**
 * Tool calls as conversation items (role `tool`): what the assistant asked the owner's server, with which arguments,
 * what came back (or why nothing did) and how long it took. Chat writes them in the turn's transaction; an async
 * tool's result completes its item when it arrives.
 */
export interface ToolItem {
  id: string;
  inReplyTo: string | null;
  toolId: string | null;
  name: string;
  arguments: unknown;
  status: 'pending' | 'succeeded' | 'failed';
  result: unknown;
  error: string | null;
  durationMs: number;
}

interface ToolItemRow extends ToolItem {
  createdAt: Date;
}

export const toolItemSchema = z
  .object({
    id: z.string().describe('The tool call id: the webhook-id of its request.'),
    role: z.literal('tool'),
    name: z.string().describe("The tool's name."),
    arguments: z.unknown().describe('The arguments the assistant gave (JSON).'),
    status: z
      .enum(['pending', 'succeeded', 'failed'])
      .describe('pending: an async tool whose result has not arrived yet.'),
    result: z.unknown().describe("The tool's result (JSON); null unless succeeded."),
    error: z.string().nullable().describe('Why it failed (invalid arguments, timeout, HTTP status, the tool’s error).'),
    durationMs: z.number().int().describe("The owner's server's time (0 when no request was made)."),
    inReplyTo: z.string().nullable().describe('The user message of the turn that made the call.'),
    createdAt: z.string(),
  })
  .meta({ id: 'ToolCallItem' });

/** Writes a turn's tool calls (inside the turn's transaction, after its messages). */
export async function recordToolItems(
  tx: TransactionSql,
  conversation: { id: string; assistantId: string },
  items: ToolItem[],
): Promise<void> {
  // Pipelined on the transaction's connection: one round trip, run in this order.
  await Promise.all(
    items.map(
      (item) => tx`
      insert into tool_calls (id, conversation_id, assistant_id, in_reply_to, tool_id, name, arguments, status, result,
                              error, duration_ms)
      values (${item.id}, ${conversation.id}, ${conversation.assistantId}, ${item.inReplyTo}, ${item.toolId},
              ${item.name}, ${tx.json((item.arguments ?? null) as never)}, ${item.status},
              ${item.result === undefined ? null : tx.json(item.result as never)}, ${item.error}, ${item.durationMs})`,
    ),
  );
}

/** An async tool's result, once it arrived (its item was stored pending). */
export async function completeToolItem(
  sql: Db,
  id: string,
  outcome: { status: 'succeeded' | 'failed'; result?: unknown; error?: string | undefined; durationMs: number },
): Promise<void> {
  await sql`
    update tool_calls set status = ${outcome.status},
      result = ${outcome.result === undefined ? null : sql.json(outcome.result as never)},
      error = ${outcome.error ?? null}, duration_ms = ${outcome.durationMs}
    where id = ${id} and status = 'pending'`;
}

export async function toolItemsOf(sql: Db, conversationId: string) {
  const rows = await sql<ToolItemRow[]>`
    select id, in_reply_to, tool_id, name, arguments, status, result, error, duration_ms, created_at
    from tool_calls where conversation_id = ${conversationId} order by created_at, id`;
  return rows.map((r) => ({
    id: r.id,
    role: 'tool' as const,
    name: r.name,
    arguments: r.arguments,
    status: r.status,
    result: r.result ?? null,
    error: r.error,
    durationMs: r.durationMs,
    inReplyTo: r.inReplyTo,
    createdAt: r.createdAt.toISOString(),
  }));
}
