import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { callSchema, voicemailSchema } from './present.js';
import * as service from './service.js';
import { CALL_STATUSES } from './status.js';
import { variablesSchema } from './routes-shared.js';

const tags = ['Calls'];
const e164 = z
  .string()
  .regex(/^\+[1-9][0-9]{6,14}$/, 'must be an E.164 number (+ and 7 to 15 digits)')
  .describe('E.164, e.g. +15550100123.');
const callId = z
  .string()
  .regex(/^call_[0-9a-f]{24}$/, 'not a call id')
  .describe('A call id (call_...).');
const params = z.object({ callId });

const createBody = z.object({
  assistantId: z.string().min(1).max(100).describe('Public asst_ or internal id of an assistant of yours.'),
  to: e164,
  from: e164.describe('A phone number registered to your account (POST /api/v1/phone-numbers): the caller id.'),
  variables: variablesSchema.optional(),
  metadata: z
    .record(z.string().max(100), z.unknown())
    .refine((m) => JSON.stringify(m).length <= 4096, 'metadata is at most 4 KiB of JSON')
    .optional()
    .describe('Yours: returned with the call and in its webhooks.'),
  voicemail: voicemailSchema.optional(),
  maxDurationSeconds: z.number().int().min(30).max(14_400).optional().describe('The carrier hangs up after this.'),
});

const listQuery = z.object({
  batchId: z
    .string()
    .regex(/^cb_[0-9a-f]{24}$/, 'not a batch id')
    .optional(),
  status: z.enum(CALL_STATUSES).optional(),
  assistantId: z.string().min(1).max(100).optional(),
  to: e164.optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().max(200).optional(),
});

const errors = {
  401: 'Missing or invalid API key',
  403: 'The key lacks the scope',
  404: 'No such call (or not yours)',
};

/** Owner REST: /api/v1/calls (Bearer voice). */
export function callRoutes(deps: service.CallsDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/calls',
      auth: 'bearer',
      scope: 'voice',
      schemas: { body: createBody, response: { 201: callSchema } },
      openapi: {
        summary: 'Place a call',
        description:
          "Parley asks the `from` number's carrier to call `to`; once answered, the assistant talks over the carrier's media stream as on an inbound call. The plan's voice minutes, concurrent calls and budget are checked before the carrier is asked. Follow the call with GET /api/v1/calls/{callId} or the call.status_changed webhook.",
        tags,
        errors: {
          400: 'Invalid body, or `from` is not your number (CALLS_FROM_NOT_REGISTERED)',
          401: errors[401],
          402: 'Voice minutes or budget used up',
          403: errors[403],
          404: 'No such assistant (or not yours)',
          409: 'The assistant has voice turned off (CALLS_VOICE_DISABLED)',
          422: 'The carrier refused the call (CALLS_CARRIER_REFUSED); the call is failed',
          429: "The plan's concurrent calls are all in use",
          503: 'The carrier did not answer (CALLS_CARRIER_UNAVAILABLE); the call is failed',
        },
      },
      handler: async (ctx) => reply.json(await service.placeCall(deps, ownerOf(ctx), ctx.body, ctx.headers), 201),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/calls',
      auth: 'bearer',
      scope: 'voice',
      schemas: {
        query: listQuery,
        response: { 200: z.object({ calls: z.array(callSchema), nextCursor: z.string().nullable() }) },
      },
      openapi: {
        summary: 'List calls placed',
        description:
          'Newest first, a page at a time (pass nextCursor as cursor); filter by status, assistant or number.',
        tags,
        errors: { 401: errors[401], 403: errors[403], 404: 'No such assistant' },
      },
      handler: async (ctx) => reply.json(await service.listCalls(deps, ownerOf(ctx), ctx.query)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/calls/:callId',
      auth: 'bearer',
      scope: 'voice',
      schemas: { params, response: { 200: callSchema } },
      openapi: {
        summary: 'Get a call',
        description: 'Its status, what answered, its outcome, and its conversation and voice session once answered.',
        tags,
        errors,
      },
      handler: async (ctx) => reply.json(await service.getCall(deps, ownerOf(ctx), ctx.params.callId)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/calls/:callId/transfer',
      auth: 'bearer',
      scope: 'voice',
      schemas: {
        params,
        body: z.object({
          to: e164.describe('The person to hand the call to.'),
          mode: z
            .literal('cold')
            .default('cold')
            .describe('cold: the call is redirected to dial `to` and the assistant leaves at once.'),
        }),
        response: { 200: callSchema },
      },
      openapi: {
        summary: 'Transfer a live call to a person',
        description:
          "Cold: the carrier dials `to` (showing the call's `from`) and the assistant's part of the call ends; the call goes on until the person hangs up.",
        tags,
        errors: {
          ...errors,
          400: 'Invalid body',
          409: 'The call is not live (CALLS_NOT_LIVE)',
          422: 'The carrier refused (CALLS_CARRIER_REFUSED)',
          503: 'The carrier did not answer',
        },
      },
      handler: async (ctx) => reply.json(await service.transferCall(deps, ownerOf(ctx), ctx.params.callId, ctx.body)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/calls/:callId/cancel',
      auth: 'bearer',
      scope: 'voice',
      schemas: { params, body: z.object({}).strict(), response: { 200: callSchema } },
      openapi: {
        summary: 'Cancel a call',
        description:
          'Before it is answered the carrier stops ringing and the call is canceled; a live call is hung up (it ends completed).',
        tags,
        errors: { ...errors, 409: 'The call is already over (CALLS_ALREADY_ENDED)', 503: 'The carrier did not answer' },
      },
      handler: async (ctx) => reply.json(await service.cancelCall(deps, ownerOf(ctx), ctx.params.callId)),
    }),
  ];
}
