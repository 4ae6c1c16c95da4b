import { z } from 'zod';
import { pageQuerySchema } from '../assistants/index.js';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from './events.js';
import * as service from './service.js';

const tags = ['Webhooks'];
const scope = 'webhooks';

const endpointId = z
  .string()
  .regex(/^whep_[0-9A-Za-z]{1,64}$/, 'not a webhook endpoint id')
  .describe('A webhook endpoint id (whep_...).');
const params = z.object({ endpointId });
const deliveryParams = z.object({
  endpointId,
  deliveryId: z
    .string()
    .regex(/^whd_[0-9a-f]{32}$/, 'not a delivery id')
    .describe('A delivery id (whd_...).'),
});

/** Actions without fields: an empty JSON object (or no body). */
const noBody = z.object({}).strict();

const eventType = z.enum(WEBHOOK_EVENT_TYPES).describe('An event an endpoint can subscribe to.');
const urlField = z
  .string()
  .min(1)
  .max(2048)
  .describe('Where events are POSTed: http(s), no credentials, not a private, local or reserved address.');
const events = z.array(eventType).min(1).max(WEBHOOK_EVENT_TYPES.length).describe('The events sent to it.');
const description = z.string().max(500);

export const endpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(eventType),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabledReason: z
      .enum(['gone'])
      .nullable()
      .describe('gone: Parley turned it off after it answered 410 Gone; null otherwise.'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });

const endpointWithSecret = endpointSchema
  .extend({
    secret: z
      .string()
      .describe('whsec_ + base64 signing key (Standard Webhooks). Shown only in this answer: store it now.'),
  })
  .meta({ id: 'WebhookEndpointWithSecret' });

export const deliverySchema = z
  .object({
    id: z.string(),
    messageId: z.string().describe('The webhook-id header of every attempt (and of replays).'),
    eventType: z.enum([...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE]),
    status: z.enum(['pending', 'delivered', 'failed', 'disabled']),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: z.string().nullable(),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

const errors = {
  401: 'Missing or invalid API key',
  403: 'The key lacks the webhooks scope',
  404: 'No such endpoint (or not yours)',
};

/** Owner REST: /api/v1/webhook-endpoints (Bearer with the `webhooks` scope, or the dashboard session). */
export function webhookRoutes(deps: service.WebhookServiceDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/webhook-endpoints',
      auth: 'bearer',
      scope,
      schemas: {
        body: z.object({ url: urlField, events, description: description.optional() }),
        response: { 201: endpointWithSecret },
      },
      openapi: {
        summary: 'Register a webhook endpoint',
        description:
          'Events are POSTed to the URL signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The secret is in this answer only.',
        tags,
        errors: {
          400: 'Invalid body, or the URL is not allowed (WEBHOOK_URL_NOT_ALLOWED)',
          409: 'The account has the most endpoints it may have (WEBHOOK_ENDPOINT_LIMIT)',
          ...errors,
        },
      },
      handler: async (ctx) => reply.json(await service.createEndpoint(deps, ownerOf(ctx), ctx.body), 201),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/webhook-endpoints',
      auth: 'bearer',
      scope,
      schemas: { response: { 200: z.object({ endpoints: z.array(endpointSchema) }) } },
      openapi: {
        summary: 'List webhook endpoints',
        description: 'Newest first (at most 100). Secrets are never shown again.',
        tags,
        errors: { 401: errors[401], 403: errors[403] },
      },
      handler: async (ctx) => reply.json({ endpoints: await service.listEndpoints(deps, ownerOf(ctx)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/webhook-endpoints/:endpointId',
      auth: 'bearer',
      scope,
      schemas: { params, response: { 200: endpointSchema } },
      openapi: { summary: 'Get a webhook endpoint', description: 'Without its secret.', tags, errors },
      handler: async (ctx) => reply.json(await service.getEndpoint(deps, ownerOf(ctx), ctx.params.endpointId)),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/v1/webhook-endpoints/:endpointId',
      auth: 'bearer',
      scope,
      schemas: {
        params,
        body: z.object({
          url: urlField.optional(),
          events: events.optional(),
          description: description.nullable().optional(),
          enabled: z.boolean().optional(),
        }),
        response: { 200: endpointSchema },
      },
      openapi: {
        summary: 'Update a webhook endpoint',
        description: 'Fields left out keep their value. enabled: true turns an endpoint back on (also after a 410).',
        tags,
        errors: { 400: 'Invalid body, or the URL is not allowed (WEBHOOK_URL_NOT_ALLOWED)', ...errors },
      },
      handler: async (ctx) =>
        reply.json(await service.updateEndpoint(deps, ownerOf(ctx), ctx.params.endpointId, ctx.body)),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/webhook-endpoints/:endpointId',
      auth: 'bearer',
      scope,
      schemas: { params, response: { 200: z.object({ ok: z.literal(true) }) } },
      openapi: { summary: 'Delete a webhook endpoint', description: 'With its deliveries.', tags, errors },
      handler: async (ctx) => {
        await service.deleteEndpoint(deps, ownerOf(ctx), ctx.params.endpointId);
        return reply.json({ ok: true as const });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/webhook-endpoints/:endpointId/rotate-secret',
      auth: 'bearer',
      scope,
      schemas: { params, body: noBody, response: { 200: endpointWithSecret } },
      openapi: {
        summary: 'Rotate the signing secret',
        description:
          'A new secret, shown only here. For 24 hours the old one keeps signing beside it: each request carries two signatures.',
        tags,
        errors,
      },
      handler: async (ctx) => reply.json(await service.rotateSecret(deps, ownerOf(ctx), ctx.params.endpointId)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/webhook-endpoints/:endpointId/test',
      auth: 'bearer',
      scope,
      schemas: { params, body: noBody, response: { 202: z.object({ delivery: deliverySchema }) } },
      openapi: {
        summary: 'Send a test event',
        description: 'Queues a webhook.test event to this endpoint alone.',
        tags,
        errors: { 409: 'The endpoint is disabled (WEBHOOK_ENDPOINT_DISABLED)', ...errors },
      },
      handler: async (ctx) =>
        reply.json({ delivery: await service.sendTest(deps, ownerOf(ctx), ctx.params.endpointId) }, 202),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/webhook-endpoints/:endpointId/deliveries',
      auth: 'bearer',
      scope,
      schemas: {
        params,
        query: pageQuerySchema,
        response: { 200: z.object({ deliveries: z.array(deliverySchema), nextCursor: z.string().nullable() }) },
      },
      openapi: {
        summary: 'List deliveries',
        description: 'Newest first, a page at a time (pass nextCursor as cursor).',
        tags,
        errors: { 400: 'Invalid query', ...errors },
      },
      handler: async (ctx) =>
        reply.json(await service.listDeliveries(deps, ownerOf(ctx), ctx.params.endpointId, ctx.query)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/webhook-endpoints/:endpointId/deliveries/:deliveryId/replay',
      auth: 'bearer',
      scope,
      schemas: { params: deliveryParams, body: noBody, response: { 202: z.object({ delivery: deliverySchema }) } },
      openapi: {
        summary: 'Replay a delivery',
        description: 'Sends the same message again (same webhook-id and body) as a new delivery.',
        tags,
        errors: {
          ...errors,
          404: 'No such endpoint or delivery (WEBHOOK_DELIVERY_NOT_FOUND)',
          409: 'The endpoint is disabled (WEBHOOK_ENDPOINT_DISABLED)',
        },
      },
      handler: async (ctx) =>
        reply.json(
          { delivery: await service.replay(deps, ownerOf(ctx), ctx.params.endpointId, ctx.params.deliveryId) },
          202,
        ),
    }),
  ];
}
