import { z } from 'zod';
import { ownerOf } from '../auth/principal.js';
import type { Sql } from '../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { callQuerySchema, callSchema, overviewQuerySchema, overviewSchema } from './schemas.js';
import { listCallLog, overviewOf } from './service.js';

const tags = ['Overview'];

/** GET /api/v1/overview (the owner's day) and GET /api/v1/call-log (every call, filtered, a page at a time). */
export function overviewRoutes(deps: { sql: Sql }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/overview',
      auth: 'bearer',
      scope: 'analytics:read',
      schemas: { query: overviewQuerySchema, response: { 200: overviewSchema } },
      openapi: {
        summary: "The account's day across every assistant: calls, chats, answered rate, turn latency, spend",
        description:
          'One UTC day (default today): calls and chats started, questions and how they were answered, the p50/p95 ' +
          'turn latency of its calls, the settled spend by kind, how the calls ended, and the same per assistant.',
        tags,
        errors: { 400: 'Invalid date', 401: 'Missing or invalid API key', 403: 'The key lacks the scope' },
      },
      handler: async (ctx) => reply.json(await overviewOf(deps.sql, ownerOf(ctx), ctx.query.date)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/call-log',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: {
        query: callQuerySchema,
        response: { 200: z.object({ calls: z.array(callSchema), nextCursor: z.string().nullable() }) },
      },
      openapi: {
        summary: 'The call log: every voice call of the account, newest first',
        description:
          'Calls of all assistants (browser, WebSocket and phone), a page at a time (pass nextCursor as cursor), each ' +
          'with its transport, masked caller number, end reason, duration, cost and median turn latency. Filter by ' +
          'assistant, source, transport, phone number, end reason and date.',
        tags,
        errors: {
          400: 'Invalid filter',
          401: 'Missing or invalid API key',
          403: 'The key lacks the scope',
          404: 'No such assistant',
        },
      },
      handler: async (ctx) => reply.json(await listCallLog(deps.sql, ownerOf(ctx), ctx.query)),
    }),
  ];
}
