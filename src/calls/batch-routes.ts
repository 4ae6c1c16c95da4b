import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { batchSchema, createBatchBody } from './batch-schemas.js';
import * as service from './batch-service.js';
import type { CallsDeps } from './service.js';

const tags = ['Calls'];
const params = z.object({
  batchId: z
    .string()
    .regex(/^cb_[0-9a-f]{24}$/, 'not a batch id')
    .describe('A call batch id (cb_...).'),
});
const errors = {
  401: 'Missing or invalid API key',
  403: 'The key lacks the scope',
  404: 'No such batch (or not yours)',
};

/** Owner REST: /api/v1/call-batches (Bearer voice). */
export function batchRoutes(deps: CallsDeps): AnyRoute[] {
  const move = (action: 'pause' | 'resume' | 'cancel', summary: string, description: string) =>
    defineRoute({
      method: 'POST',
      path: `/api/v1/call-batches/:batchId/${action}`,
      auth: 'bearer',
      scope: 'voice',
      schemas: { params, body: z.object({}).strict(), response: { 200: batchSchema } },
      openapi: {
        summary,
        description,
        tags,
        errors: { ...errors, 409: 'The batch cannot make that move now (CALLS_BATCH_STATE)' },
      },
      handler: async (ctx) => reply.json(await service.moveBatch(deps, ownerOf(ctx), ctx.params.batchId, action)),
    });
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/call-batches',
      auth: 'bearer',
      scope: 'voice',
      schemas: { body: createBatchBody, response: { 201: batchSchema } },
      openapi: {
        summary: 'Call a list of contacts',
        description:
          'Up to 10,000 contacts called from one registered number, at most maxConcurrent at once, inside the calling window, leaving reservedInbound of the plan\u2019s concurrent calls to inbound calls, and tried again per the retry rule. Each call is a call of /api/v1/calls (filter with batchId). call-batch.completed says when every contact is done.',
        tags,
        errors: {
          400: 'Invalid body, or `from` is not your number (CALLS_FROM_NOT_REGISTERED)',
          401: errors[401],
          403: errors[403],
          404: 'No such assistant (or not yours)',
          409: 'The assistant has voice turned off (CALLS_VOICE_DISABLED)',
        },
      },
      handler: async (ctx) => reply.json(await service.createBatch(deps, ownerOf(ctx), ctx.body, ctx.headers), 201),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/call-batches',
      auth: 'bearer',
      scope: 'voice',
      schemas: { response: { 200: z.object({ batches: z.array(batchSchema) }) } },
      openapi: { summary: 'List call batches', description: 'Newest first (at most 100).', tags, errors },
      handler: async (ctx) => reply.json({ batches: await service.listBatches(deps, ownerOf(ctx)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/call-batches/:batchId',
      auth: 'bearer',
      scope: 'voice',
      schemas: { params, response: { 200: batchSchema } },
      openapi: { summary: 'Get a call batch', description: 'With its contacts by status and outcome.', tags, errors },
      handler: async (ctx) => reply.json(await service.getBatch(deps, ownerOf(ctx), ctx.params.batchId)),
    }),
    move('pause', 'Pause a call batch', 'No new call starts; calls on the line go on.'),
    move('resume', 'Resume a call batch', 'Calling goes on where it stopped.'),
    move(
      'cancel',
      'Cancel a call batch',
      'Contacts not yet called are done (canceled) and the batch ends; calls on the line go on.',
    ),
  ];
}
