import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { PLAN_CODES } from '../metering/index.js';
import * as service from './service.js';
import type { BillingDeps } from './service.js';

const tags = ['Billing'];
const paidPlans = PLAN_CODES.filter((p) => p !== 'free') as ['starter', 'pro', 'business'];
const errors = { 401: 'No dashboard session', 503: 'Billing is not configured (BILLING_ACCESS_TOKEN unset)' };
const urlSchema = z.object({ url: z.string() });

const billingSchema = z.object({
  billing: z.object({
    server: z.enum(['production', 'sandbox']),
    planCode: z.string(),
    periodStart: z.string(),
    periodEnd: z.string(),
    subscription: z
      .object({ id: z.string(), status: z.string().nullable(), planCode: z.string().nullable() })
      .nullable(),
    plans: z.array(z.object({ planCode: z.enum(paidPlans), available: z.boolean(), current: z.boolean() })),
  }),
});

/**
 * Owner billing routes (dashboard session; hidden from the v1 document) and the inbound Polar webhook.
 * The access token and webhook secret never leave the server: no route returns or logs them.
 */
export function billingRoutes(deps: BillingDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/account/billing',
      auth: 'session',
      schemas: { response: { 200: billingSchema } },
      openapi: { summary: 'Plan, billing period and subscription of the account', tags, hidden: true, errors },
      handler: async (ctx) => reply.json({ billing: await service.billingOverview(deps, ownerOf(ctx).accountId) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/account/billing/checkout',
      auth: 'session',
      schemas: { body: z.object({ planCode: z.enum(paidPlans) }).strict(), response: { 200: urlSchema } },
      openapi: {
        summary: 'Start a hosted checkout for a paid plan (the server picks the product)',
        tags,
        hidden: true,
        errors: {
          400: 'Invalid plan, or the plan has no product configured',
          502: 'The billing provider failed',
          ...errors,
        },
      },
      handler: async (ctx) =>
        reply.json(
          await service.startCheckout(
            deps,
            { accountId: ownerOf(ctx).accountId, planCode: ctx.body.planCode },
            ctx.signal,
          ),
        ),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/account/billing/portal',
      auth: 'session',
      schemas: { body: z.object({}).strict(), response: { 200: urlSchema } },
      openapi: {
        summary: 'Open the billing customer portal',
        tags,
        hidden: true,
        errors: { 409: 'No billing customer yet', 502: 'The billing provider failed', ...errors },
      },
      handler: async (ctx) => reply.json(await service.openPortal(deps, ownerOf(ctx).accountId, ctx.signal)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/webhooks/polar',
      auth: 'none',
      rawBody: true,
      // Anything JSON is accepted here; the signature is checked over the raw bytes before the event is read.
      schemas: { body: z.unknown(), response: { 200: z.object({ ok: z.literal(true), replay: z.boolean() }) } },
      openapi: {
        summary: 'Polar webhook (Standard Webhooks signature)',
        tags,
        hidden: true,
        errors: { 400: 'Bad signature or event', 503: 'BILLING_WEBHOOK_SECRET unset' },
      },
      handler: async (ctx) => {
        const result = await service.receiveWebhook(
          deps,
          {
            id: ctx.headers['webhook-id'],
            timestamp: ctx.headers['webhook-timestamp'],
            signature: ctx.headers['webhook-signature'],
          },
          ctx.rawBody ?? Buffer.alloc(0),
        );
        return reply.json({ ok: true, replay: result.replay });
      },
    }),
  ];
}
