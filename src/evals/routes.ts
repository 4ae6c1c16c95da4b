import { z } from 'zod';
import { assistantIdParam } from '../assistants/index.js';
import { ownerOf } from '../auth/principal.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import * as service from './service.js';

const caseInput = z
  .object({
    question: z.string().trim().min(1).max(4000),
    expected: z
      .string()
      .max(4000)
      .nullable()
      .optional()
      .describe('The answer expected; blank or absent: the case is answered but not scored.'),
  })
  .strict();

export const evalBodySchema = z.object({ cases: z.array(caseInput).min(1).max(service.MAX_CASES) }).strict();

const sourceSchema = z.object({ documentId: z.string(), name: z.string(), snippet: z.string(), score: z.number() });

export const evalSchema = z.object({
  id: z.string(),
  assistantId: z.string().describe('Internal id of the assistant.'),
  status: z.enum(['queued', 'running', 'done', 'failed']),
  caseCount: z.number().int(),
  completedCount: z.number().int(),
  averageScore: z.number().nullable().describe('Mean score of the scored finished cases (null when none is scored).'),
  costMicros: z.number().int().describe('Provider cost of the finished cases, in micros.'),
  error: z.object({ code: z.string(), message: z.string() }).nullable().describe('Why a failed eval stopped.'),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});

export const evalCaseSchema = z.object({
  index: z.number().int(),
  status: z.enum(['pending', 'done']),
  question: z.string(),
  expected: z.string().nullable(),
  answer: z.string().nullable(),
  sources: z.array(sourceSchema),
  outcome: z.enum(['answered', 'no_answer', 'model_failure']).nullable(),
  score: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe(
      "0..1: the expected answer's facts found in the answer, lowered by a contradiction, or the hosted model's own grade (src/evals/facts.ts, judge.ts); null when not scored.",
    ),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  costMicros: z.number().int(),
  error: z.string().nullable(),
  completedAt: z.string().nullable(),
});

const assistantParams = z.object({ assistantId: assistantIdParam });
const evalParams = z.object({ assistantId: assistantIdParam, evalId: z.string().min(1).max(100) });

/** Dashboard-only (session cookie; hidden from the v1 document). */
export function evalRoutes(deps: service.EvalDeps & { onQueued: () => void }): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/assistants/:assistantId/evals',
      auth: 'session',
      schemas: { params: assistantParams, body: evalBodySchema, response: { 202: z.object({ eval: evalSchema }) } },
      openapi: {
        summary: 'Queue an eval: 1–50 questions run like chat turns and scored against the expected answers',
        hidden: true,
        errors: {
          403: 'The plan does not include evals (plan_limit)',
          404: 'No such assistant',
          503: 'The chat provider is not configured',
        },
      },
      handler: async (ctx) => {
        const row = await service.createEval(deps, ownerOf(ctx), ctx.params.assistantId, ctx.body.cases);
        deps.onQueued();
        return reply.json({ eval: service.presentEval(row) }, 202);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/assistants/:assistantId/evals/:evalId',
      auth: 'session',
      schemas: {
        params: evalParams,
        response: { 200: z.object({ eval: evalSchema, cases: z.array(evalCaseSchema) }) },
      },
      openapi: {
        summary: 'An eval with its cases (answers, sources, scores, cost)',
        hidden: true,
        errors: { 403: 'The plan does not include evals (plan_limit)', 404: 'No such assistant or eval' },
      },
      handler: async (ctx) => {
        const found = await service.getEval(deps, ownerOf(ctx), ctx.params.assistantId, ctx.params.evalId);
        return reply.json({ eval: service.presentEval(found.eval), cases: found.cases.map(service.presentCase) });
      },
    }),
  ];
}
