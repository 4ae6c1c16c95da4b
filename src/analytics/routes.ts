import { z } from 'zod';
import { ownerOf } from '../auth/principal.js';
import { assistantIdParam } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { assistantAnalytics } from './service.js';

const count = z.number().int();
const rate = z.number().nullable().describe('0–1; null when there is nothing to divide.');
const analysisFigures = z
  .object({
    analysed: count.describe('Conversations started then that have an analysis.'),
    passed: count.describe('Of those, with a verdict that is a pass (pass_fail true, or a score of 6 to 10).'),
    failed: count.describe('With a verdict that is a fail (pass_fail false, or a score of 1 to 5).'),
    successRate: rate.describe('passed / (passed + failed); null without a verdict.'),
    sentiment: z.object({ positive: count, neutral: count, negative: count }),
  })
  .describe('What their post-call analyses found.');

/** GET /api/v1/analytics?assistantId=&from=&to= (Bearer, analytics:read). */
export function analyticsRoutes(deps: { sql: Sql }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/analytics',
      auth: 'bearer',
      scope: 'analytics:read',
      schemas: {
        query: z.object({
          assistantId: assistantIdParam,
          from: z
            .string()
            .max(40)
            .optional()
            .describe('ISO date or date-time (inclusive); default 30 days before `to`.'),
          to: z.string().max(40).optional().describe('ISO date or date-time (exclusive); default now.'),
        }),
        response: {
          200: z.object({
            metrics: z.object({
              from: z.string(),
              to: z.string(),
              conversations: count,
              messages: count,
              answered: count,
              noAnswer: count,
              modelFailures: count,
              answeredRate: rate,
              noAnswerRate: rate,
              feedback: z.object({ positive: count, negative: count, positiveRatio: rate }),
              analysis: analysisFigures,
            }),
            daily: z.array(
              z.object({
                date: z.string(),
                conversations: count,
                messages: count,
                answered: count,
                noAnswer: count,
                analysis: analysisFigures,
              }),
            ),
            topUnanswered: z.array(z.object({ question: z.string(), count, lastAskedAt: z.string() })),
          }),
        },
      },
      openapi: {
        summary:
          'Analytics of one assistant: totals, answer outcomes, feedback, analysis success and sentiment, a daily series, top unanswered questions',
        description:
          'Over [from, to) (default: the last 30 days). Rates are null when there is nothing to divide. `analysis`: the ' +
          'success rate and sentiment of the conversations started then that were analysed, in total and per day.',
        tags: ['Analytics'],
        errors: {
          400: 'Invalid range',
          401: 'Missing or invalid API key',
          403: 'The key lacks the scope',
          404: 'No such assistant',
        },
      },
      handler: async (ctx) => reply.json(await assistantAnalytics(deps.sql, ownerOf(ctx), ctx.query)),
    }),
  ];
}
