import { z } from 'zod';
import { getOwnedAssistant, assistantIdParam } from '../../assistants/index.js';
import { ownerOf } from '../../auth/index.js';
import type { Sql } from '../../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../../http/index.js';
import { voiceErrors } from '../errors.js';
import { SESSION_ID_PATTERN } from '../session/session-id.js';
import { presentTimeline } from './present.js';
import { dailyLatency, findTimeline } from './queries.js';
import { latencyQuerySchema, latencyResponseSchema, timelineSchema } from './schemas.js';
import type { TimelineWriter } from './writer.js';

const tags = ['Voice'];

/** The timeline of a call, and an assistant's turn latency by day. */
export function timelineRoutes(deps: { sql: Sql; timelines: TimelineWriter }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/voice/sessions/:sessionId/timeline',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: {
        params: z.object({
          sessionId: z.string().regex(SESSION_ID_PATTERN, 'must be a voice session id (vs_...)'),
        }),
        response: { 200: timelineSchema },
      },
      openapi: {
        summary: 'What happened in a voice call, and where each turn’s waiting time went',
        description:
          'For a live or ended call of your account: its events in order (milliseconds since the mint), its turns ' +
          '(from the caller’s end of speech to the first answer audio Parley wrote to the caller, split into parts ' +
          'that add up, each with its owner) and, once it ended, why, whose fault that was, the billed seconds and ' +
          'the cost. A live call on this instance is read from memory; otherwise from what was written (every few ' +
          'seconds while it runs).',
        tags,
        errors: { 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'No such voice session' },
      },
      handler: async (ctx) => {
        const { accountId } = ownerOf(ctx);
        // Memory first: a call leaves memory only once its last write has landed, so the row read after is never
        // older than what memory held (the other order could miss both when the last write lands in between).
        const live = deps.timelines.live(ctx.params.sessionId);
        const row = await findTimeline(deps.sql, accountId, ctx.params.sessionId);
        if (row === undefined) throw voiceErrors.notFound();
        return reply.json(presentTimeline(row, live?.accountId === accountId ? live.snapshot : undefined));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/assistants/:assistantId/voice/latency',
      auth: 'bearer',
      scope: 'analytics:read',
      schemas: {
        params: z.object({ assistantId: assistantIdParam }),
        query: latencyQuerySchema,
        response: { 200: latencyResponseSchema },
      },
      openapi: {
        summary: 'Turn latency and time to first audio of an assistant’s calls, by day',
        description:
          'Per day (UTC) over the last `days` days: the turns of its calls, their latency (end of speech to first ' +
          'answer audio) and the provider’s time to first audio, p50 and p95. Days without turns are left out.',
        tags,
        errors: { 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'No such assistant' },
      },
      handler: async (ctx) => {
        const who = ownerOf(ctx);
        const assistant = await getOwnedAssistant(deps.sql, who, ctx.params.assistantId);
        const today = new Date();
        const since = new Date(
          Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - (ctx.query.days - 1) * 86_400_000,
        );
        const days = await dailyLatency(deps.sql, who.accountId, assistant.id, since);
        return reply.json({
          assistantId: assistant.id,
          days: days.map((d) => ({ ...d, turns: Number(d.turns) })),
        });
      },
    }),
  ];
}
