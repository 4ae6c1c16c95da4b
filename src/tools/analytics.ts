import { z } from 'zod';
import { getOwnedAssistant } from '../assistants/index.js';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import * as q from './queries.js';
import { toolParams } from './schemas.js';
import type { ToolServiceDeps } from './service.js';

const toolAnalyticsSchema = z
  .object({
    assistantId: z.string(),
    days: z.number().int(),
    tools: z.array(
      z.object({
        name: z.string().describe("The tool's name (a deleted tool's past calls keep theirs)."),
        calls: z.number().int(),
        errors: z.number().int().describe('Calls that failed (invalid arguments included).'),
        p50Ms: z.number().nullable().describe("The owner's server's time, median (null: no finished call)."),
        p95Ms: z.number().nullable(),
      }),
    ),
  })
  .meta({ id: 'ToolAnalytics' });

/** `GET /api/v1/assistants/{assistantId}/tool-analytics`: calls, errors and p50/p95 per tool, chat and voice. */
export function toolAnalyticsRoutes(deps: ToolServiceDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/assistants/:assistantId/tool-analytics',
      auth: 'bearer',
      scope: 'analytics:read',
      schemas: {
        params: toolParams,
        query: z.object({
          days: z.coerce.number().int().min(1).max(90).default(7).describe('The last this many days.'),
        }),
        response: { 200: toolAnalyticsSchema },
      },
      openapi: {
        summary: "Calls, errors and latency of an assistant's tools",
        description:
          'Per tool name over the last `days` days, in chat and in voice: how many calls, how many failed, and the ' +
          "owner's server's time at p50 and p95 (pending async calls are counted, not timed).",
        tags: ['Assistants'],
        errors: { 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'No such assistant' },
      },
      handler: async (ctx) => {
        const assistant = await getOwnedAssistant(deps.sql, ownerOf(ctx), ctx.params.assistantId);
        const since = new Date(Date.now() - ctx.query.days * 86_400_000);
        const tools = await q.toolAnalytics(deps.sql, assistant.id, since);
        return reply.json({ assistantId: assistant.id, days: ctx.query.days, tools });
      },
    }),
  ];
}
