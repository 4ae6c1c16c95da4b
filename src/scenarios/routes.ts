import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import type { ScenarioRunner } from './runner.js';
import {
  oneRunParams,
  oneScenarioParams,
  resultSchema,
  runCreateSchema,
  runSchema,
  scenarioCreateSchema,
  scenarioParams,
  scenarioPatchSchema,
  scenarioSchema,
} from './schemas.js';
import * as service from './service.js';

const tags = ['Assistants'];
const errors = {
  401: 'Missing or invalid API key',
  403: 'The key lacks the scope',
  404: 'No such assistant or scenario (or not yours)',
};
const invalid =
  'Invalid body (VALIDATION_FAILED names the field), a regex that does not compile (SCENARIO_INVALID_REGEX), a turn or ' +
  'expectation the transport cannot make (SCENARIO_TURN_UNSUPPORTED, SCENARIO_EXPECT_UNSUPPORTED), two mocks of one ' +
  'tool (SCENARIO_MOCK_DUPLICATE)';

/** Owner REST: /api/v1/assistants/{assistantId}/scenarios and .../scenario-runs (Bearer, or the dashboard). */
export function scenarioRoutes(deps: service.ScenarioServiceDeps & { runner: ScenarioRunner }): AnyRoute[] {
  const base = '/api/v1/assistants/:assistantId/scenarios';
  const runs = '/api/v1/assistants/:assistantId/scenario-runs';
  return [
    defineRoute({
      method: 'POST',
      path: base,
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: {
        params: scenarioParams,
        body: scenarioCreateSchema,
        response: { 201: z.object({ scenario: scenarioSchema }) },
      },
      openapi: {
        summary: 'Add a test scenario to an assistant',
        description:
          'A scripted caller (what it says, presses, waits for and talks over) and what the assistant must and must not do.',
        tags,
        errors: {
          400: invalid,
          409: 'A scenario of that name exists (SCENARIO_NAME_TAKEN), or the assistant has 100 (SCENARIO_LIMIT)',
          ...errors,
        },
      },
      handler: async (ctx) =>
        reply.json(
          { scenario: await service.createScenario(deps, ownerOf(ctx), ctx.params.assistantId, ctx.body) },
          201,
        ),
    }),
    defineRoute({
      method: 'GET',
      path: base,
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: { params: scenarioParams, response: { 200: z.object({ scenarios: z.array(scenarioSchema) }) } },
      openapi: { summary: "List an assistant's scenarios", description: 'Oldest first (at most 100).', tags, errors },
      handler: async (ctx) =>
        reply.json({ scenarios: await service.listScenarios(deps, ownerOf(ctx), ctx.params.assistantId) }),
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/:scenarioId`,
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: { params: oneScenarioParams, response: { 200: z.object({ scenario: scenarioSchema }) } },
      openapi: { summary: 'Get a scenario', description: 'As it was last written.', tags, errors },
      handler: async (ctx) =>
        reply.json({
          scenario: await service.getScenario(deps, ownerOf(ctx), ctx.params.assistantId, ctx.params.scenarioId),
        }),
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/:scenarioId/results`,
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: {
        params: oneScenarioParams,
        response: {
          200: z.object({
            results: z.array(resultSchema.extend({ runId: z.string(), runCreatedAt: z.string() })),
          }),
        },
      },
      openapi: {
        summary: "A scenario's history",
        description: 'Its latest 20 results across runs, newest first: did the last document change break something.',
        tags,
        errors,
      },
      handler: async (ctx) =>
        reply.json({
          results: await deps.runner.history(ownerOf(ctx), ctx.params.assistantId, ctx.params.scenarioId),
        }),
    }),
    defineRoute({
      method: 'PATCH',
      path: `${base}/:scenarioId`,
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: {
        params: oneScenarioParams,
        body: scenarioPatchSchema,
        response: { 200: z.object({ scenario: scenarioSchema }) },
      },
      openapi: {
        summary: 'Update a scenario',
        description: 'Fields left out keep their value; turns, expect and toolMocks are replaced as a whole.',
        tags,
        errors: { 400: invalid, 409: 'A scenario of that name exists (SCENARIO_NAME_TAKEN)', ...errors },
      },
      handler: async (ctx) =>
        reply.json({
          scenario: await service.updateScenario(
            deps,
            ownerOf(ctx),
            ctx.params.assistantId,
            ctx.params.scenarioId,
            ctx.body,
          ),
        }),
    }),
    defineRoute({
      method: 'DELETE',
      path: `${base}/:scenarioId`,
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { params: oneScenarioParams, response: { 200: z.object({ ok: z.literal(true) }) } },
      openapi: { summary: 'Delete a scenario', description: 'Its past results stay in their runs.', tags, errors },
      handler: async (ctx) => {
        await service.deleteScenario(deps, ownerOf(ctx), ctx.params.assistantId, ctx.params.scenarioId);
        return reply.json({ ok: true as const });
      },
    }),
    defineRoute({
      method: 'POST',
      path: runs,
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { params: scenarioParams, body: runCreateSchema, response: { 202: z.object({ run: runSchema }) } },
      openapi: {
        summary: 'Run some or all of the scenarios',
        description:
          'Each scenario runs as a conversation of source `test` (never billed to the voice minutes; spend counts as ' +
          'usual): chat through the chat service, websocket and phone as a simulated caller on a real media socket. Poll the run ' +
          'for verdicts; `scenario-run.completed` is sent to webhooks when it ends.',
        tags,
        errors: {
          400: 'Invalid body, or a scenario id or name the assistant does not have (SCENARIO_UNKNOWN)',
          409: 'The assistant has no scenarios (SCENARIO_NONE), or 2 runs running already (SCENARIO_RUN_BUSY)',
          ...errors,
        },
      },
      handler: async (ctx) =>
        reply.json(
          {
            run: await deps.runner.start(
              ownerOf(ctx),
              ctx.params.assistantId,
              ctx.body.scenarios,
              ctx.body.concurrency,
            ),
          },
          202,
        ),
    }),
    defineRoute({
      method: 'GET',
      path: runs,
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: { params: scenarioParams, response: { 200: z.object({ runs: z.array(runSchema) }) } },
      openapi: {
        summary: "An assistant's recent scenario runs",
        description: 'Newest first (at most 50).',
        tags,
        errors,
      },
      handler: async (ctx) => reply.json({ runs: await deps.runner.list(ownerOf(ctx), ctx.params.assistantId) }),
    }),
    defineRoute({
      method: 'GET',
      path: `${runs}/:runId`,
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: {
        params: oneRunParams,
        response: { 200: z.object({ run: runSchema, results: z.array(resultSchema) }) },
      },
      openapi: {
        summary: 'A scenario run with its results',
        description:
          'Each result: the transcript with timings, one verdict per expectation with its evidence, figures.',
        tags,
        errors: { ...errors, 404: 'No such assistant or run (SCENARIO_RUN_NOT_FOUND)' },
      },
      handler: async (ctx) => reply.json(await deps.runner.get(ownerOf(ctx), ctx.params.assistantId, ctx.params.runId)),
    }),
  ];
}
