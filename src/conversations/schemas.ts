import { z } from 'zod';
import { assistantIdParam } from '../assistants/index.js';
import { isStorableDate } from '../http/index.js';

export const sourceSchema = z
  .object({
    documentId: z.string(),
    name: z.string(),
    snippet: z.string(),
    score: z.number(),
  })
  .meta({ id: 'Source', description: 'A document passage an answer used.' });

/** What the list shows of a conversation's analysis (GET /api/v1/conversations/{id}/analysis has all of it). */
export const listAnalysisSchema = z
  .object({
    summary: z.string().nullable(),
    success: z
      .enum(['pass', 'fail'])
      .nullable()
      .describe('pass_fail true or a score of 6 to 10: pass; false or 1 to 5: fail; null: none or descriptive.'),
    verdict: z.union([z.boolean(), z.number(), z.string()]).nullable().describe('The verdict as the rubric gives it.'),
    sentiment: z.enum(['positive', 'neutral', 'negative']).nullable(),
    structuredData: z.record(z.string(), z.unknown()).nullable(),
  })
  // Not a named component: a named schema inside another named one (Conversation, in two responses) trips the
  // OpenAPI builder's duplicate check.
  .describe('Its latest analysis, in brief.');

export const conversationSchema = z
  .object({
    id: z.string(),
    assistantId: z.string().describe('Internal id of the assistant.'),
    visitorId: z.string().nullable(),
    visitorLabel: z
      .string()
      .describe('A readable name for the visitor, the same for every conversation of one visitor ("Visitor K7QM").'),
    source: z.enum(['api', 'widget', 'playground', 'phone', 'test']),
    callerNumber: z
      .string()
      .nullable()
      .describe('A phone call\'s caller number, masked ("+1 555 ••• 0123"); null for every other source.'),
    channel: z.enum(['chat', 'voice']).describe('voice: at least one voice call; chat: text only.'),
    callCount: z.number().int().describe('Voice calls in it.'),
    messageCount: z.number().int(),
    firstMessage: z.string().nullable().describe("The visitor's first message (its first 300 characters)."),
    outcome: z
      .enum(['answered', 'no_answer', 'model_failure'])
      .nullable()
      .describe('How its answers went, the worst first: model_failure, then no_answer, then answered.'),
    startedAt: z.string(),
    durationSeconds: z.number().int().describe('From its start to its last message or the end of its last call.'),
    costMicros: z
      .number()
      .int()
      .describe('What it cost, in micro-dollars: its chat answers plus its voice calls, from the usage ledger.'),
    createdAt: z.string(),
    updatedAt: z.string(),
    analysis: listAnalysisSchema.nullable().describe('Its latest analysis, in brief; null: never analysed.'),
  })
  .meta({ id: 'Conversation' });

export const messageSchema = z
  .object({
    id: z.string(),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    outcome: z.enum(['answered', 'no_answer', 'model_failure']).nullable(),
    sources: z.array(sourceSchema),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    costMicros: z.number().int().describe('What this answer cost, in micro-dollars (0 for questions and transcripts).'),
    feedback: z
      .enum(['positive', 'negative'])
      .nullable()
      .describe(
        "The visitor's rating of this answer (POST /api/v1/feedback); null when not rated (always for user messages).",
      ),
    createdAt: z.string(),
  })
  .meta({ id: 'Message' });

export const recordingSchema = z
  .object({
    sessionId: z.string(),
    url: z.string().describe("Dashboard-only: fetch with the owner's dashboard session (Range supported)."),
    ready: z.boolean().describe('False while the call runs or its file is being written.'),
  })
  .meta({ id: 'Recording' });

export const voiceCallSchema = z
  .object({
    sessionId: z.string(),
    source: z.enum(['api', 'widget', 'playground', 'phone', 'test']),
    state: z.enum(['active', 'ended', 'lost']).describe('lost: the instance running it died and another settled it.'),
    endReason: z
      .string()
      .nullable()
      .describe(
        'Why the service ended it (usage_limit, superseded, idle, max_duration, heartbeat_lost, control_lost, disconnected, voice_unavailable, shutdown, assistant_ended); null when the caller hung up or it still runs.',
      ),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    durationSeconds: z.number().int().nullable().describe('From the start to the end; null while the call runs.'),
    billableSeconds: z.number().int().describe('Seconds billed (time with a connected caller).'),
    costMicros: z.number().int().describe('What the call cost, in micro-dollars (its settled usage events).'),
    timelineUrl: z
      .string()
      .describe('Its timeline (GET, conversations:read): events, turns with their latency split by owner, the end.'),
  })
  .meta({ id: 'VoiceCall' });

/** A date (`2026-11-26`, the whole day for `to`) or an ISO 8601 date and time. */
export function dateParam(end: boolean) {
  return z
    .string()
    .max(40)
    .refine((v) => isStorableDate(new Date(v)), { error: 'must be a date (2026-11-26) or an ISO 8601 date and time' })
    .transform((v) => {
      const d = new Date(v);
      return end && /^\d{4}-\d{2}-\d{2}$/.test(v) ? new Date(d.getTime() + 86_400_000) : d;
    });
}

/** The list's filters; the CSV export takes the same. */
export const filterQuerySchema = z.object({
  assistantId: assistantIdParam.optional(),
  channel: z.enum(['chat', 'voice']).optional().describe('voice: with at least one call; chat: text only.'),
  from: dateParam(false).optional().describe('Started at or after (a date, or an ISO 8601 date and time).'),
  to: dateParam(true).optional().describe('Started before (a date counts as the whole day).'),
  outcome: z
    .enum(['answered', 'no_answer', 'model_failure'])
    .optional()
    .describe(
      'Listed with this outcome (the worst of its answers; no_answer also when its last question has no answer after it).',
    ),
  q: z.string().max(200).optional().describe('Words in any of its messages (case-insensitive).'),
  visitorId: z.string().min(1).max(200).optional().describe("One visitor's conversations."),
  success: z
    .enum(['pass', 'fail'])
    .optional()
    .describe('By its analysis verdict: pass (pass_fail true, or a score of 6 to 10) or fail (false, or 1 to 5).'),
  scoreMin: z.coerce.number().int().min(1).max(10).optional().describe('A score_1_10 verdict of at least this.'),
  scoreMax: z.coerce.number().int().min(1).max(10).optional().describe('A score_1_10 verdict of at most this.'),
  sentiment: z.enum(['positive', 'neutral', 'negative']).optional().describe("By its analysis' sentiment."),
  dataField: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { error: 'must be the name of a structured data field' })
    .optional()
    .describe('A structured data field that was found (with dataValue: whose value matches).'),
  dataValue: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Words in a structured data value (case-insensitive; in dataField only, when given).'),
});
