import { z } from 'zod';
import { ownerOf } from '../auth/principal.js';
import type { Sql } from '../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { conversationsCsv } from './export-csv.js';
import * as owner from './owner-service.js';
import { filterQuerySchema } from './schemas.js';

const tags = ['Conversations'];
const conversationParams = z.object({ conversationId: z.string().min(1).max(100) });
/** The most rows one CSV export holds; narrow the filters for more. */
export const CSV_EXPORT_MAX_ROWS = 10_000;

const erasedSchema = z
  .object({
    conversations: z.number().int(),
    messages: z.number().int(),
    feedback: z.number().int(),
    calls: z.number().int().describe('Voice calls unlinked from the visitor (kept, anonymous, as the billing record).'),
    recordings: z.number().int().describe('Recording files deleted from disk.'),
  })
  .meta({ id: 'ErasureCounts' });

const erasedAnswer = z.object({ ok: z.literal(true), deleted: erasedSchema });

type Detail = Record<string, unknown> & {
  conversation: ReturnType<typeof owner.presentSummary>;
  messages: Array<ReturnType<typeof owner.presentMessage>>;
};

/** Export (JSON, CSV) and deletion (one conversation, or everything about a visitor), with the owner's key. */
export function ownerRoutes(
  deps: { sql: Sql; removeRecording?: (sessionId: string) => Promise<boolean> },
  detailOf: (who: { accountId: string }, conversationId: string) => Promise<Detail>,
): AnyRoute[] {
  const { sql } = deps;
  const eraser: owner.Eraser = { removeRecording: deps.removeRecording ?? (async () => false) };
  const actor = (ctx: Parameters<typeof ownerOf>[0]) => {
    const who = ownerOf(ctx);
    return { accountId: who.accountId, actorUserId: who.userId, requestId: ctx.requestId };
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/conversations/export',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: { query: filterQuerySchema, response: { 200: z.string() } },
      openapi: {
        summary: 'Export the list of conversations as CSV',
        description:
          `The conversations the same filters select (newest first, at most ${CSV_EXPORT_MAX_ROWS}), one row each: id, ` +
          'start, channel, visitor, assistant, messages, calls, duration, cost, outcome, first message, and its analysis: ' +
          "summary, success (pass or fail), the verdict, sentiment and one data.<field> column per field of the assistants' " +
          'structured data schemas.',
        tags,
        contentTypes: { 200: 'text/csv' },
        errors: { 404: 'No such assistant' },
      },
      handler: async (ctx) => {
        const who = ownerOf(ctx);
        const rows: Array<ReturnType<typeof owner.presentSummary>> = [];
        let cursor: string | undefined;
        do {
          const page = await owner.searchConversations(sql, who, { ...ctx.query, limit: 100, cursor });
          rows.push(...page.conversations);
          cursor = page.nextCursor ?? undefined;
        } while (cursor !== undefined && rows.length < CSV_EXPORT_MAX_ROWS);
        const csv = await conversationsCsv(sql, rows.slice(0, CSV_EXPORT_MAX_ROWS));
        const day = new Date().toISOString().slice(0, 10);
        return reply.bytes(csv, 'text/csv; charset=utf-8', 200, {
          'content-disposition': `attachment; filename="conversations-${day}.csv"`,
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/conversations/:conversationId/export',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: { params: conversationParams, response: { 200: z.record(z.string(), z.unknown()) } },
      openapi: {
        summary: 'Export one conversation as a JSON file',
        description:
          'Everything GET answers (the conversation, its transcript with the passages each answer used, its voice calls ' +
          'and recordings) plus the documents it cited, each once, and when it was exported; as an attachment.',
        tags,
        errors: { 404: 'No such conversation' },
      },
      handler: async (ctx) => {
        const detail = await detailOf(ownerOf(ctx), ctx.params.conversationId);
        const body = {
          exportedAt: new Date().toISOString(),
          ...detail,
          sources: owner.citedSources(detail.messages),
        };
        return reply.json(body, 200, {
          'content-disposition': `attachment; filename="${detail.conversation.id}.json"`,
        });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/conversations/:conversationId',
      auth: 'bearer',
      scope: 'conversations:write',
      schemas: { params: conversationParams, response: { 200: erasedAnswer } },
      openapi: {
        summary: 'Delete a conversation for good',
        description:
          'Its messages, feedback and call recordings (from disk) go at once; its calls stay as anonymous billing ' +
          'records. Written to the audit log. 409 while one of its calls still runs.',
        tags,
        errors: { 404: 'No such conversation', 409: 'A call of it still runs (CONVERSATION_CALL_ACTIVE)' },
      },
      handler: async (ctx) =>
        reply.json({
          ok: true,
          deleted: await owner.deleteConversation(sql, actor(ctx), eraser, ctx.params.conversationId),
        }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/visitors/:visitorId',
      auth: 'bearer',
      scope: 'conversations:write',
      schemas: { params: z.object({ visitorId: z.string().min(1).max(200) }), response: { 200: erasedAnswer } },
      openapi: {
        summary: 'Delete everything about one visitor (a privacy request)',
        description:
          "All of this account's conversations of the visitor (messages, feedback, recordings on disk) and the " +
          "visitor's id on every call, which stays as an anonymous billing record. Written to the audit log. Deleting " +
          'a visitor with nothing stored answers zero counts. 409 while one of their calls still runs.',
        tags,
        errors: { 409: 'A call of theirs still runs (CONVERSATION_CALL_ACTIVE)' },
      },
      handler: async (ctx) =>
        reply.json({ ok: true, deleted: await owner.deleteVisitorData(sql, actor(ctx), eraser, ctx.params.visitorId) }),
    }),
  ];
}
