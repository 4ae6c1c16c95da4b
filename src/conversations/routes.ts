import { z } from 'zod';
import { analysisOf, analysisSchema } from '../analysis/index.js';
import { ownerOf } from '../auth/principal.js';
import { pageQuerySchema } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { ownerRoutes } from './owner-routes.js';
import * as owner from './owner-service.js';
import { conversationSchema, filterQuerySchema, messageSchema, recordingSchema, voiceCallSchema } from './schemas.js';
import { toolItemSchema, toolItemsOf } from './tool-items.js';

const tags = ['Conversations'];

/** The conversation's voice recordings (consented calls only); supplied by the voice capability. */
export type RecordingsOf = (conversationId: string) => Promise<Array<z.output<typeof recordingSchema>>>;

/** The conversation's voice calls (end reason, duration); supplied by the voice capability. */
export type VoiceCallsOf = (
  conversationId: string,
) => Promise<Array<Omit<z.output<typeof voiceCallSchema>, 'costMicros'>>>;

export interface ConversationRouteDeps {
  sql: Sql;
  recordingsOf?: RecordingsOf;
  voiceCallsOf?: VoiceCallsOf;
  /** Deletes a voice session's recording from disk now; true when there was one. */
  removeRecording?: (sessionId: string) => Promise<boolean>;
}

/** v1: list (with search and filters) and get; exports and deletion are in owner-routes.ts. */
export function conversationRoutes(deps: ConversationRouteDeps): AnyRoute[] {
  const { sql } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/conversations',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: {
        query: pageQuerySchema.extend(filterQuerySchema.shape),
        response: { 200: z.object({ conversations: z.array(conversationSchema), nextCursor: z.string().nullable() }) },
      },
      openapi: {
        summary: 'List and search conversations, newest first',
        description:
          "Chat and voice conversations of the key's account, a page at a time (pass nextCursor as cursor), each with " +
          'its channel, start, duration, cost, first message and a readable visitor label. Filter by assistant, channel, ' +
          'date, outcome or visitor, and search the text of their messages with q. By their analysis: success (pass or ' +
          'fail), a score range, sentiment, and a structured data field (dataField) or value (dataValue).',
        tags,
        errors: {
          400: 'A filter is not valid (VALIDATION_FAILED), or scoreMin is above scoreMax (CONVERSATION_FILTER_INVALID)',
          401: 'Missing or invalid API key',
          403: 'The key lacks the scope',
          404: 'No such assistant',
        },
      },
      handler: async (ctx) => reply.json(await owner.searchConversations(sql, ownerOf(ctx), ctx.query)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/conversations/:conversationId',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: {
        params: z.object({ conversationId: z.string().min(1).max(100) }),
        response: {
          200: z.object({
            conversation: conversationSchema,
            messages: z.array(messageSchema),
            recordings: z.array(recordingSchema),
            voiceCalls: z.array(voiceCallSchema),
            analysis: analysisSchema
              .nullable()
              .describe(
                'What was read from it once it ended (GET /api/v1/conversations/{id}/analysis); null: none yet.',
              ),
            toolCalls: z
              .array(toolItemSchema)
              .describe("The assistant's tool calls (role tool), oldest first; inReplyTo places each in its turn."),
          }),
        },
      },
      openapi: {
        summary: 'Get a conversation with its messages, their sources and its voice recordings',
        description:
          'Messages in order, each answer with the document passages it used, its cost and its feedback; the voice calls with their end reason, duration and cost; recordings are played back through the dashboard; its analysis (summary, fields, verdict).',
        tags,
        errors: { 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'No such conversation' },
      },
      handler: async (ctx) => reply.json(await detailOf(deps, ownerOf(ctx), ctx.params.conversationId)),
    }),
    ...ownerRoutes(deps, (who, id) => detailOf(deps, who, id)),
  ];
}

/** A conversation as GET answers it (the JSON export starts from the same). */
export async function detailOf(deps: ConversationRouteDeps, who: { accountId: string }, conversationId: string) {
  const found = await owner.summaryOf(deps.sql, who, conversationId);
  const id = found.summary.id;
  const [recordings, calls, costs, analysis, toolCalls] = await Promise.all([
    deps.recordingsOf ? deps.recordingsOf(id) : [],
    deps.voiceCallsOf ? deps.voiceCallsOf(id) : [],
    owner.voiceCallCosts(deps.sql, id),
    analysisOf(deps.sql, who.accountId, id),
    toolItemsOf(deps.sql, id),
  ]);
  return {
    conversation: found.summary,
    messages: found.messages.map(owner.presentMessage),
    recordings,
    voiceCalls: calls.map((c) => ({ ...c, costMicros: costs.get(c.sessionId) ?? 0 })),
    analysis,
    toolCalls,
  };
}
