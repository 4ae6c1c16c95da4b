import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { MAX_ALERT_THRESHOLDS } from './budget.js';
import { budgetView, dailyUsage, MAX_DAILY_SPAN_DAYS, updateBudget, usageForecast } from './budget-report.js';
import type { Meter } from './service.js';

const errors = { 401: 'No dashboard session' };
const micros = z.number().int().describe('micros (1,000,000 = $1)');

const thresholds = z
  .array(z.number().int().min(1).max(100))
  .max(MAX_ALERT_THRESHOLDS)
  .refine((list) => new Set(list).size === list.length, 'Each threshold at most once.')
  .describe(
    `Percentages (1–100) of the effective budget, at most ${MAX_ALERT_THRESHOLDS}; each alerts once per period.`,
  );

const budgetSchema = z.object({
  budget: z.object({
    alertThresholdsPercent: z.array(z.number().int()),
    hardLimitMicros: micros.nullable(),
    effective: z.object({
      budgetMicros: micros.describe('The smaller of the granted budget and the hard limit.'),
      source: z.enum(['plan', 'operator_override', 'hard_limit']),
      planBudgetMicros: micros,
      limitOverrideMicros: micros.nullable(),
      creditMicros: micros,
      hardLimitMicros: micros.nullable(),
    }),
    periodStart: z.string(),
    periodEnd: z.string(),
    spentMicros: micros,
    alerts: z.array(
      z.object({
        thresholdPercent: z.number().int(),
        spentMicros: micros,
        budgetMicros: micros,
        projectedMicros: micros,
        crossedAt: z.string(),
      }),
    ),
  }),
});

const forecastSchema = z.object({
  forecast: z.object({
    periodStart: z.string(),
    periodEnd: z.string(),
    spentMicros: micros,
    budgetMicros: micros,
    liveExposureMicros: micros.describe('Held by live calls and streams now.'),
    projectedMicros: micros.describe("Spend at the period's end at this period's pace, plus the live exposure."),
    projectedExhaustionAt: z
      .string()
      .nullable()
      .describe('When the budget runs out at this pace; null: not this period.'),
    voice: z.object({
      secondsUsed: z.number().int(),
      secondsLimit: z.number().int(),
      projectedSeconds: z.number().int(),
    }),
  }),
});

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'A UTC date, YYYY-MM-DD.')
  .refine(isCalendarDate, 'Not a calendar date (years 0001 to 9999).');

/**
 * A day that exists (Date.parse rolls 30 February over into March) in a year the database holds (it has no year 0).
 */
function isCalendarDate(d: string): boolean {
  const ms = Date.parse(`${d}T00:00:00Z`);
  return !Number.isNaN(ms) && !d.startsWith('0000') && new Date(ms).toISOString().slice(0, 10) === d;
}

const dailySchema = z.object({
  from: z.string(),
  to: z.string(),
  periodStart: z.string(),
  periodEnd: z.string(),
  currentPeriodOnly: z.boolean().describe('No from/to: the days of the current period, its spend only.'),
  totalMicros: micros,
  days: z.array(
    z.object({
      date: z.string(),
      costMicros: micros,
      requestCount: z.number().int(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
      voiceSeconds: z.number().int(),
      byAssistant: z.array(
        z.object({ assistantId: z.string().nullable(), costMicros: micros, requestCount: z.number().int() }),
      ),
      bySource: z.array(z.object({ source: z.string(), costMicros: micros, requestCount: z.number().int() })),
      byKind: z.array(z.object({ kind: z.string(), costMicros: micros, units: z.number().int() })),
    }),
  ),
});

/** Budget settings, the forecast and the daily roll-up: dashboard session only, hidden from the v1 document. */
export function budgetRoutes(meter: Meter): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/account/budget',
      auth: 'session',
      schemas: { response: { 200: budgetSchema } },
      openapi: {
        summary: 'Budget settings, the effective budget and this period’s threshold alerts',
        tags: ['Usage'],
        hidden: true,
        errors,
      },
      handler: async (ctx) => reply.json({ budget: await budgetView(meter, ownerOf(ctx).accountId) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/v1/account/budget',
      auth: 'session',
      schemas: {
        body: z
          .object({
            alertThresholdsPercent: thresholds.optional(),
            hardLimitMicros: z
              .number()
              .int()
              .min(0)
              .max(Number.MAX_SAFE_INTEGER)
              .nullable()
              .optional()
              .describe('At or below the plan budget (or its override); null removes it.'),
          })
          .strict(),
        response: { 200: budgetSchema },
      },
      openapi: {
        summary: 'Set the alert thresholds and the hard limit',
        tags: ['Usage'],
        hidden: true,
        errors: { 400: 'Invalid thresholds, or a hard limit above the budget', ...errors },
      },
      handler: async (ctx) => {
        const owner = ownerOf(ctx);
        const budget = await updateBudget(meter, owner.accountId, owner.userId, ctx.body, ctx.requestId);
        return reply.json({ budget });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/account/usage/forecast',
      auth: 'session',
      schemas: { response: { 200: forecastSchema } },
      openapi: { summary: 'Spend projected to the end of the period', tags: ['Usage'], hidden: true, errors },
      handler: async (ctx) => reply.json({ forecast: await usageForecast(meter, ownerOf(ctx).accountId) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/account/usage/daily',
      auth: 'session',
      schemas: {
        query: z.object({
          from: isoDate.optional().describe('First UTC day (inclusive).'),
          to: isoDate.optional().describe(`Last UTC day (inclusive); at most ${MAX_DAILY_SPAN_DAYS} days.`),
        }),
        response: { 200: dailySchema },
      },
      openapi: {
        summary: 'Usage per day, by assistant, source and kind',
        tags: ['Usage'],
        hidden: true,
        errors: { 400: 'Invalid range', ...errors },
      },
      handler: async (ctx) => reply.json(await dailyUsage(meter, ownerOf(ctx).accountId, ctx.query)),
    }),
  ];
}
