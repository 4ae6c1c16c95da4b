import { z } from 'zod';
import { ownerOf } from '../auth/principal.js';
import { assistantIdParam, pageQuerySchema } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import * as service from './service.js';

export const sourceSchema = z
  .object({
    documentId: z.string(),
    name: z.string(),
    snippet: z.string(),
    score: z.number(),
  })
  .meta({ id: 'Source', description: 'A document passage an answer used.' });

const conversationSchema = z
  .object({
    id: z.string(),
    assistantId: z.string().describe('Internal id of the assistant.'),
    visitorId: z.string().nullable(),
    source: z.enum(['api', 'widget', 'playground']),
    messageCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Conversation' });

const messageSchema = z
  .object({
    id: z.string(),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    outcome: z.enum(['answered', 'no_answer', 'model_failure']).nullable(),
    sources: z.array(sourceSchema),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    costMicros: z.number().int(),
    feedback: z
      .enum(['positive', 'negative'])
      .nullable()
      .describe(
        "The visitor's rating of this answer (POST /api/v1/feedback); null when not rated (always for user messages).",
      ),
    createdAt: z.string(),
  })
  .meta({ id: 'Message' });

const recordingSchema = z
  .object({
    sessionId: z.string(),
    url: z.string().describe("Dashboard-only: fetch with the owner's dashboard session (Range supported)."),
    ready: z.boolean().describe('False while the call runs or its file is being written.'),
  })
  .meta({ id: 'Recording' });

const voiceCallSchema = z
  .object({
    sessionId: z.string(),
    source: z.enum(['api', 'widget', 'playground']),
    state: z.enum(['active', 'ended', 'lost']).describe('lost: the instance running it died and another settled it.'),
    endReason: z
      .string()
      .nullable()
      .describe(
        'Why the service ended it (usage_limit, superseded, idle, max_duration, heartbeat_lost, control_lost, disconnected, voice_unavailable, shutdown); null when the caller hung up or it still runs.',
      ),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    durationSeconds: z.number().int().nullable().describe('From the start to the end; null while the call runs.'),
    billableSeconds: z.number().int().describe('Seconds billed (time with a connected caller).'),
  })
  .meta({ id: 'VoiceCall' });

const tags = ['Conversations'];

/** The conversation's voice recordings (consented calls only); supplied by the voice capability. */
export type RecordingsOf = (conversationId: string) => Promise<Array<z.output<typeof recordingSchema>>>;

/** v1: GET /api/v1/conversations and /api/v1/conversations/{conversationId} (Bearer, conversations:read). */
/** The conversation's voice calls (end reason, duration); supplied by the voice capability. */
export type VoiceCallsOf = (conversationId: string) => Promise<Array<z.output<typeof voiceCallSchema>>>;

export function conversationRoutes(deps: {
  sql: Sql;
  recordingsOf?: RecordingsOf;
  voiceCallsOf?: VoiceCallsOf;
}): AnyRoute[] {
  const { sql } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/conversations',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: {
        query: pageQuerySchema.extend({ assistantId: assistantIdParam.optional() }),
        response: { 200: z.object({ conversations: z.array(conversationSchema), nextCursor: z.string().nullable() }) },
      },
      openapi: {
        summary: 'List conversations (optionally of one assistant), newest first',
        description: "Chat and voice conversations of the key's account, a page at a time (pass nextCursor as cursor).",
        tags,
        errors: { 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'No such assistant' },
      },
      handler: async (ctx) => {
        const page = await service.listConversations(sql, ownerOf(ctx), ctx.query);
        return reply.json({
          conversations: page.conversations.map(service.presentConversation),
          nextCursor: page.nextCursor,
        });
      },
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
          }),
        },
      },
      openapi: {
        summary: 'Get a conversation with its messages, their sources and its voice recordings',
        description:
          'Messages in order, each answer with the document passages it used and its feedback; the voice calls with their end reason and duration; recordings are played back through the dashboard.',
        tags,
        errors: { 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'No such conversation' },
      },
      handler: async (ctx) => {
        const found = await service.getConversation(sql, ownerOf(ctx), ctx.params.conversationId);
        const [recordings, voiceCalls] = await Promise.all([
          deps.recordingsOf ? deps.recordingsOf(found.conversation.id) : [],
          deps.voiceCallsOf ? deps.voiceCallsOf(found.conversation.id) : [],
        ]);
        return reply.json({
          conversation: service.presentConversation(found.conversation),
          messages: found.messages.map(service.presentMessage),
          recordings,
          voiceCalls,
        });
      },
    }),
  ];
}
