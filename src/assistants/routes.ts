import { z } from 'zod';
import { ownerOf } from '../auth/principal.js';
import type { Deps } from '../deps.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import type { Meter } from '../metering/index.js';
import { pageQuerySchema } from './pagination.js';
import { assistantCreateSchema, assistantIdParam, assistantPatchSchema, assistantSchema } from './schemas.js';
import * as service from './service.js';

const tags = ['Assistants'];
const params = z.object({ assistantId: assistantIdParam });
const single = z.object({ assistant: assistantSchema });
const errors = {
  401: 'Missing or invalid API key',
  403: 'The key lacks the scope',
  404: 'No such assistant (or not yours)',
};

/**
 * Owner REST: /api/v1/assistants (Bearer key, assistants:read / assistants:write). Creation is checked against the
 * plan's assistant count through the meter (enforce mode: 403 `plan_limit`).
 */
export function assistantRoutes(deps: Pick<Deps, 'sql'> & { meter: Meter }): AnyRoute[] {
  const { sql, meter } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/assistants',
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: {
        query: pageQuerySchema,
        response: { 200: z.object({ assistants: z.array(assistantSchema), nextCursor: z.string().nullable() }) },
      },
      openapi: {
        summary: 'List assistants',
        description: "The account's assistants, newest first, a page at a time (pass nextCursor as cursor).",
        tags,
        errors: { 401: errors[401], 403: errors[403] },
      },
      handler: async (ctx) => {
        const page = await service.listAssistants(sql, ownerOf(ctx), ctx.query);
        return reply.json({ assistants: page.assistants.map(service.presentAssistant), nextCursor: page.nextCursor });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/assistants',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { body: assistantCreateSchema, response: { 201: single } },
      openapi: {
        summary: 'Create an assistant',
        description:
          'Creates an assistant with its public asst_ id. The plan caps how many an account may have (403 plan_limit when enforced).',
        tags,
        errors: {
          400: 'Invalid body',
          401: errors[401],
          403: 'The key lacks the scope, or the plan allows no more assistants (reason plan_limit)',
        },
      },
      handler: async (ctx) => {
        const created = await service.createAssistant(sql, ownerOf(ctx), ctx.body, { meter });
        return reply.json({ assistant: service.presentAssistant(created) }, 201);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/assistants/:assistantId',
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: { params, response: { 200: single } },
      openapi: {
        summary: 'Get an assistant',
        description: "By internal id or public asst_ id; only assistants of the key's account.",
        tags,
        errors,
      },
      handler: async (ctx) => {
        const found = await service.getOwnedAssistant(sql, ownerOf(ctx), ctx.params.assistantId);
        return reply.json({ assistant: service.presentAssistant(found) });
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/v1/assistants/:assistantId',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { params, body: assistantPatchSchema, response: { 200: single } },
      openapi: {
        summary: 'Update an assistant (settings merge deeply)',
        description: 'Fields left out keep their value; settings objects merge key by key.',
        tags,
        errors: { 400: 'Invalid body', ...errors },
      },
      handler: async (ctx) => {
        const updated = await service.updateAssistant(sql, ownerOf(ctx), ctx.params.assistantId, ctx.body);
        return reply.json({ assistant: service.presentAssistant(updated) });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/assistants/:assistantId',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { params, response: { 200: z.object({ ok: z.literal(true) }) } },
      openapi: {
        summary: 'Delete an assistant with its documents and conversations',
        description: 'Permanent: its documents, passages, conversations and recordings go with it.',
        tags,
        errors,
      },
      handler: async (ctx) => {
        await service.deleteAssistant(sql, ownerOf(ctx), ctx.params.assistantId);
        return reply.json({ ok: true });
      },
    }),
  ];
}
