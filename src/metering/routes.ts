import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { budgetRoutes } from './budget-routes.js';
import * as report from './report.js';
import type { Meter } from './service.js';

const tags = ['Usage'];
const errors = { 401: 'No dashboard session' };
const micros = z.number().int().describe('micros (1,000,000 = $1)');

const summarySchema = z.object({
  summary: z.object({
    accountId: z.string(),
    planCode: z.string(),
    status: z.string(),
    periodStart: z.string(),
    periodEnd: z.string(),
    limitMicros: micros.nullable().describe('The budget; null: no cap (SELF_HOSTED).'),
    consumedMicros: micros,
    reservedMicros: micros,
    remainingMicros: micros.nullable().describe('What is left of the budget; null: no cap (SELF_HOSTED).'),
    requestCount: z.number().int(),
    monthlyRequestCap: z.number().int().nullable(),
    enforcement: z.enum(['shadow', 'enforce', 'off']),
    selfHosted: z.boolean().describe('SELF_HOSTED: no plan limit applies on this server, so no cap is shown.'),
    voice: z.object({
      voiceSecondsUsed: z.number().int(),
      voiceSecondsLimit: z.number().int().nullable().describe('null: no cap (SELF_HOSTED).'),
      voiceSecondsReserved: z.number().int(),
      playgroundVoiceSeconds: z.number().int(),
    }),
  }),
});

const limitsSchema = z.object({
  limits: z.object({
    planCode: z.string(),
    enforcement: z.enum(['shadow', 'enforce', 'off']),
    periodStart: z.string(),
    periodEnd: z.string(),
    budgetMicros: micros,
    limitOverrideMicros: micros.nullable(),
    creditMicros: micros,
    limitMicros: micros,
    maxAssistants: z.number().int().nullable(),
    monthlyRequestCap: z.number().int().nullable(),
    evalsEnabled: z.boolean(),
    voiceMinutes: z.number().int(),
    voiceConcurrentCalls: z.number().int(),
    maxOutputTokens: z.number().int(),
    playgroundExempt: z.boolean(),
    playgroundVoiceExempt: z.boolean(),
    selfHosted: z
      .boolean()
      .describe('SELF_HOSTED: no plan limit applies on this server (the caps above read null, evals are on).'),
    billingConfigured: z.boolean().describe('Whether plans can be bought here; when not, an operator changes plans.'),
  }),
});

/** What the limits answer says of the installation (the dashboard words its plan gates by it). */
export type PlanSettings = Pick<Config, 'SELF_HOSTED' | 'BILLING_ACCESS_TOKEN'>;

const byAssistantSchema = z.object({
  periodStart: z.string(),
  periodEnd: z.string(),
  assistants: z.array(
    z.object({
      assistantId: z.string().nullable(),
      costMicros: micros,
      requestCount: z.number().int(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
    }),
  ),
});

const recentSchema = z.object({
  events: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      source: z.string(),
      assistantId: z.string().nullable(),
      mode: z.string(),
      outcome: z.string(),
      model: z.string().nullable(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
      units: z.number().int(),
      costMicros: micros,
      createdAt: z.string(),
    }),
  ),
});

/** A self-hosted server's summary: what was used, and no cap (none applies; SELF_HOSTED excludes enforce mode). */
function withoutCaps(summary: report.UsageSummary) {
  return {
    ...summary,
    limitMicros: null,
    remainingMicros: null,
    monthlyRequestCap: null,
    selfHosted: true,
    voice: { ...summary.voice, voiceSecondsLimit: null },
  };
}

/**
 * Owner usage routes: dashboard session only, hidden from the v1 OpenAPI document (they are not part of the v1
 * contract). API keys cannot read them (the `session` authenticator answers 401 without a cookie).
 */
export function usageRoutes(
  meter: Meter,
  settings: PlanSettings = { SELF_HOSTED: false, BILLING_ACCESS_TOKEN: undefined },
): AnyRoute[] {
  const stance = { selfHosted: settings.SELF_HOSTED, billingConfigured: settings.BILLING_ACCESS_TOKEN !== undefined };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/account/usage/summary',
      auth: 'session',
      schemas: { response: { 200: summarySchema } },
      openapi: { summary: 'Usage summary of the current billing period', tags, hidden: true, errors },
      handler: async (ctx) => {
        const summary = await report.usageSummary(meter, ownerOf(ctx).accountId);
        return reply.json({ summary: stance.selfHosted ? withoutCaps(summary) : { ...summary, selfHosted: false } });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/account/usage/limits',
      auth: 'session',
      schemas: { response: { 200: limitsSchema } },
      openapi: { summary: 'Plan limits that apply to the account', tags, hidden: true, errors },
      handler: async (ctx) => {
        const limits = await report.usageLimits(meter, ownerOf(ctx).accountId);
        // Self-hosted: the plan's caps do not apply (and cannot be enforced: SELF_HOSTED excludes enforce mode).
        const lifted = stance.selfHosted ? { maxAssistants: null, monthlyRequestCap: null, evalsEnabled: true } : {};
        return reply.json({ limits: { ...limits, ...lifted, ...stance } });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/account/usage/by-assistant',
      auth: 'session',
      schemas: { response: { 200: byAssistantSchema } },
      openapi: { summary: 'Spend per assistant in the current billing period', tags, hidden: true, errors },
      handler: async (ctx) => reply.json(await report.usageByAssistant(meter, ownerOf(ctx).accountId)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/account/usage/recent',
      auth: 'session',
      schemas: {
        query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }),
        response: { 200: recentSchema },
      },
      openapi: { summary: 'Most recent usage events', tags, hidden: true, errors: { 400: 'Invalid limit', ...errors } },
      handler: async (ctx) =>
        reply.json({ events: await report.recentUsage(meter, ownerOf(ctx).accountId, ctx.query.limit) }),
    }),
    ...budgetRoutes(meter),
  ];
}
