import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import type { Sql } from '../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { analysisSchema } from './schemas.js';
import { getAnalysis, rerun } from './service.js';

const tags = ['Conversations'];
const params = z.object({ conversationId: z.string().min(1).max(100) });

/** GET the analysis of a conversation; POST queues it again with the current settings. */
export function analysisRoutes(deps: { sql: Sql; onQueued: () => void }): AnyRoute[] {
  const { sql } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/conversations/:conversationId/analysis',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: { params, response: { 200: z.object({ analysis: analysisSchema.nullable() }) } },
      openapi: {
        summary: "Get a conversation's analysis",
        description:
          'What was read from the conversation once it ended (summary, structured data, success, sentiment), each ' +
          'enabled step with its value or null and the reason. null until the first analysis is queued.',
        tags,
        errors: { 404: 'No such conversation (ANALYSIS_CONVERSATION_NOT_FOUND)' },
      },
      handler: async (ctx) => reply.json({ analysis: await getAnalysis(sql, ownerOf(ctx), ctx.params.conversationId) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/conversations/:conversationId/analysis',
      auth: 'bearer',
      scope: 'conversations:write',
      schemas: { params, body: z.object({}).strict(), response: { 202: z.object({ analysis: analysisSchema }) } },
      openapi: {
        summary: 'Analyse a conversation again',
        description:
          "Queues the analysis with the assistant's current settings; the answer is pending (with the previous " +
          'values, if any) and a conversation.analyzed webhook follows when it is done.',
        tags,
        errors: {
          404: 'No such conversation (ANALYSIS_CONVERSATION_NOT_FOUND)',
          409: 'No analysis step is turned on (ANALYSIS_NOT_ENABLED)',
        },
      },
      handler: async (ctx) => {
        const analysis = await rerun(sql, ownerOf(ctx), ctx.params.conversationId);
        deps.onQueued();
        return reply.json({ analysis }, 202);
      },
    }),
  ];
}
