import { z } from 'zod';
import { ownerOf } from '../auth/principal.js';
import { assistantIdParam, pageQuerySchema } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import * as service from './service.js';

export const sourceSchema = z.object({
  documentId: z.string(),
  name: z.string(),
  snippet: z.string(),
  score: z.number(),
}).meta({ id: 'Source', description: 'A document passage an answer used.' });

const conversationSchema = z.object({
  id: z.string(),
  assistantId: z.string().describe('Internal id of the assistant.'),
  visitorId: z.string().nullable(),
  source: z.enum(['api', 'widget', 'playground']),
  messageCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
}).meta({ id: 'Conversation' });

const messageSchema = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  outcome: z.enum(['answered', 'no_answer', 'model_failure']).nullable(),
  sources: z.array(sourceSchema),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  costMicros: z.number().int(),
  createdAt: z.string(),
}).meta({ id: 'Message' });

const recordingSchema = z.object({
  sessionId: z.string(),
  url: z.string().describe('Dashboard-only: fetch with the owner\'s dashboard session (Range supported).'),
  ready: z.boolean().describe('False while the call runs or its file is being written.'),
}).meta({ id: 'Recording' });

const tags = ['Conversations'];

/** The conversation's voice recordings (consented calls only); supplied by the voice capability. */
export type RecordingsOf = (conversationId: string) => Promise<Array<z.output<typeof recordingSchema>>>;

/** v1: GET /api/v1/conversations and /api/v1/conversations/{conversationId} (Bearer, conversations:read). */
export function conversationRoutes(deps: { sql: Sql; recordingsOf?: RecordingsOf }): AnyRoute[] {
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
      openapi: { summary: 'List conversations (optionally of one assistant), newest first', description: 'Chat and voice conversations of the key\'s account, a page at a time (pass nextCursor as cursor).', tags, errors: { 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'No such assistant' } },
      handler: async (ctx) => {
        const page = await service.listConversations(sql, ownerOf(ctx), ctx.query);
        return reply.json({ conversations: page.conversations.map(service.presentConversation), nextCursor: page.nextCursor });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/conversations/:conversationId',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: {
        params: z.object({ conversationId: z.string().min(1).max(100) }),
        response: { 200: z.object({ conversation: conversationSchema, messages: z.array(messageSchema), recordings: z.array(recordingSchema) }) },
      },
      openapi: { summary: 'Get a conversation with its messages, their sources and its voice recordings', description: 'Messages in order, each answer with the document passages it used; recordings are played back through the dashboard.', tags, errors: { 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'No such conversation' } },
      handler: async (ctx) => {
        const found = await service.getConversation(sql, ownerOf(ctx), ctx.params.conversationId);
        const recordings = deps.recordingsOf ? await deps.recordingsOf(found.conversation.id) : [];
        return reply.json({ conversation: service.presentConversation(found.conversation), messages: found.messages.map(service.presentMessage), recordings });
      },
    }),
  ];
}
