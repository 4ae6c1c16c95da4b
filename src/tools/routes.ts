import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import {
  oneToolParams,
  toolCreateSchema,
  toolParams,
  toolPatchSchema,
  toolSchema,
  toolSecretSchema,
  toolTestResultSchema,
  toolTestSchema,
} from './schemas.js';
import * as service from './service.js';

const tags = ['Assistants'];
const errors = {
  401: 'Missing or invalid API key',
  403: 'The key lacks the scope',
  404: 'No such assistant or tool (or not yours)',
};
const invalid = 'Invalid body (VALIDATION_FAILED names the field), or the URL is not allowed (TOOL_URL_NOT_ALLOWED)';

/** Owner REST: /api/v1/assistants/{assistantId}/tools (Bearer assistants:read / assistants:write, or the dashboard). */
export function toolRoutes(deps: service.ToolServiceDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/assistants/:assistantId/tools',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: {
        params: toolParams,
        body: toolCreateSchema,
        response: {
          201: z.object({
            tool: toolSchema,
            secret: toolSecretSchema
              .optional()
              .describe(
                "The assistant's tool signing secret, only with its first tool (rotate-secret makes a new one).",
              ),
          }),
        },
      },
      openapi: {
        summary: 'Add a tool to an assistant',
        description:
          'A server tool the assistant may call: a signed POST (Standard Webhooks) to its https URL with arguments ' +
          "checked against its JSON Schema. The assistant's first tool also makes its signing secret, answered only here.",
        tags,
        errors: {
          400: invalid,
          409: 'A tool of that name exists (TOOL_NAME_TAKEN), or the assistant has 32 tools (TOOL_LIMIT)',
          ...errors,
        },
      },
      handler: async (ctx) =>
        reply.json(await service.createTool(deps, ownerOf(ctx), ctx.params.assistantId, ctx.body), 201),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/assistants/:assistantId/tools',
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: { params: toolParams, response: { 200: z.object({ tools: z.array(toolSchema) }) } },
      openapi: {
        summary: "List an assistant's tools",
        description: 'Oldest first (at most 32). The signing secret is never shown again.',
        tags,
        errors,
      },
      handler: async (ctx) =>
        reply.json({ tools: await service.listTools(deps, ownerOf(ctx), ctx.params.assistantId) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/assistants/:assistantId/tools/rotate-secret',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: {
        params: toolParams,
        body: z.object({}).strict(),
        response: {
          200: z.object({
            secret: toolSecretSchema,
            previousSecretExpiresAt: z.string().describe('Until then the old secret signs beside the new one.'),
          }),
        },
      },
      openapi: {
        summary: "Rotate the assistant's tool signing secret",
        description:
          'A new secret, shown only here. For 24 hours the old one keeps signing beside it: each tool call carries two signatures.',
        tags,
        errors: { 409: 'The assistant has no tools yet, so no secret (TOOL_NO_SECRET)', ...errors },
      },
      handler: async (ctx) => reply.json(await service.rotateSecret(deps, ownerOf(ctx), ctx.params.assistantId)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/assistants/:assistantId/tools/:toolId',
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: { params: oneToolParams, response: { 200: z.object({ tool: toolSchema }) } },
      openapi: { summary: 'Get a tool', description: 'Without the signing secret.', tags, errors },
      handler: async (ctx) =>
        reply.json({ tool: await service.getTool(deps, ownerOf(ctx), ctx.params.assistantId, ctx.params.toolId) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/v1/assistants/:assistantId/tools/:toolId',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { params: oneToolParams, body: toolPatchSchema, response: { 200: z.object({ tool: toolSchema }) } },
      openapi: {
        summary: 'Update a tool',
        description: 'Fields left out keep their value; messages and examples are replaced as a whole.',
        tags,
        errors: { 400: invalid, 409: 'A tool of that name exists (TOOL_NAME_TAKEN)', ...errors },
      },
      handler: async (ctx) =>
        reply.json({
          tool: await service.updateTool(deps, ownerOf(ctx), ctx.params.assistantId, ctx.params.toolId, ctx.body),
        }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/assistants/:assistantId/tools/:toolId/test',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { params: oneToolParams, body: toolTestSchema, response: { 200: toolTestResultSchema } },
      openapi: {
        summary: 'Test a tool',
        description:
          "Sends one sample call to the tool's URL, signed and bounded as a real call (body `call`: source `test`, " +
          'conversationId `test`), and answers what the server said. Nothing is stored: no conversation item, no ' +
          'analytics, no tool.failed event.',
        tags,
        errors: { 400: "Arguments that do not match the tool's schema (VALIDATION_FAILED names the field)", ...errors },
      },
      handler: async (ctx) =>
        reply.json(
          await service.testTool(deps, ownerOf(ctx), ctx.params.assistantId, ctx.params.toolId, ctx.body.arguments),
        ),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/assistants/:assistantId/tools/:toolId',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { params: oneToolParams, response: { 200: z.object({ ok: z.literal(true) }) } },
      openapi: {
        summary: 'Delete a tool',
        description: 'Its past calls stay in their conversations.',
        tags,
        errors,
      },
      handler: async (ctx) => {
        await service.deleteTool(deps, ownerOf(ctx), ctx.params.assistantId, ctx.params.toolId);
        return reply.json({ ok: true as const });
      },
    }),
  ];
}
