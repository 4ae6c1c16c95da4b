import { z } from 'zod';

const stepSchema = z.object({
  step: z.enum(['summary', 'structuredData', 'successEvaluation', 'sentiment']),
  status: z.enum(['ok', 'failed', 'timed_out', 'skipped']),
  reason: z.string().nullable().describe('Why the field is null (failed, timed out, nothing found); null when ok.'),
  notes: z
    .array(z.string())
    .describe('What was adjusted: values that did not validate against the schema and were dropped, fields not found.'),
});

/** An analysis as the API answers it (and as the conversation.analyzed webhook carries it). */
export const analysisSchema = z
  .object({
    conversationId: z.string(),
    status: z
      .enum(['pending', 'done'])
      .describe('pending: queued or running (the fields are from the previous run, if any).'),
    trigger: z
      .string()
      .describe(
        'What ended the conversation: voice:<sessionId> (a call settled), chat:<messageCount> (a chat went idle), rerun:<id>.',
      ),
    settingsVersion: z.string().describe('A digest of the analysis settings it ran with.'),
    requestedAt: z.string(),
    completedAt: z.string().nullable(),
    engine: z
      .enum(['local', 'openai'])
      .nullable()
      .describe('local: offline, by quotes, patterns and word lists (no language model); openai: the chat model.'),
    model: z.string().nullable(),
    summary: z.string().nullable(),
    structuredData: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe("Every field of the owner's schema: its value, or null when not found or dropped."),
    successEvaluation: z
      .object({
        rubric: z.enum(['pass_fail', 'score_1_10', 'descriptive']),
        verdict: z.union([z.boolean(), z.number(), z.string()]),
        rationale: z.string(),
      })
      .nullable(),
    sentiment: z.object({ label: z.enum(['positive', 'neutral', 'negative']), score: z.number() }).nullable(),
    steps: z
      .array(stepSchema)
      .describe('Each enabled step: ok, or failed / timed_out / skipped with the reason its field is null.'),
    costMicros: z
      .number()
      .int()
      .describe("What the run cost, metered as the assistant's chat usage (source analysis); 0 for the local engine."),
  })
  .meta({ id: 'ConversationAnalysis' });

export type AnalysisView = z.output<typeof analysisSchema>;
