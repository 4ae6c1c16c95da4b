import { z } from 'zod';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events.js';

/**
 * The events Parley POSTs to webhook endpoints, as OpenAPI 3.1 `webhooks` of the v1 document: what a receiver gets
 * is part of the contract (and of the SDK's generated types) like what the API answers.
 */
const source = z.enum(['api', 'widget', 'playground', 'test']);
const started = {
  sessionId: z.string(),
  conversationId: z.string().nullable(),
  assistantId: z.string().describe("The assistant's internal id (as in Document.assistantId)."),
  source,
  transport: z
    .string()
    .describe(
      'How the caller reached the call: websocket (the media WebSocket), phone (a carrier media stream) or webrtc.',
    ),
};

const dataOf: Record<WebhookEventType, { summary: string; data: z.ZodType }> = {
  'voice.session.started': { summary: 'A call started', data: z.object(started) },
  'voice.session.ended': {
    summary: 'A call ended and was settled',
    data: z.object({
      ...started,
      endReason: z.string().nullable().describe('Why the service ended the call; null when the client hung up.'),
      endedBy: z.enum(['client', 'service', 'reaper']).nullable(),
      durationSeconds: z.number().int().nullable(),
      billableSeconds: z.number().int(),
      costMicros: z.number().int().describe("The call's voice cost in millionths of the billing currency unit."),
    }),
  },
  'document.processed': {
    summary: 'A document is ready',
    data: z.object({ documentId: z.string(), assistantId: z.string(), status: z.literal('ready') }),
  },
  'document.failed': {
    summary: 'A document could not be processed',
    data: z.object({
      documentId: z.string(),
      assistantId: z.string(),
      status: z.literal('failed'),
      errorCode: z.enum(['DOCUMENT_PROCESSING_FAILED', 'DOCUMENT_USAGE_REFUSED']),
      error: z.string().describe('The owner-facing error the document shows.'),
    }),
  },
  'budget.threshold_crossed': {
    summary: "The account's usage crossed a budget threshold (once per threshold and period)",
    data: z.object({
      thresholdPercent: z.number().int(),
      spentMicros: z.number().int(),
      budgetMicros: z.number().int(),
      periodStart: z.string(),
      periodEnd: z.string(),
      projectedMicros: z.number(),
    }),
  },
  'tool.failed': {
    summary: "A call to one of the assistant's tools failed (timeout, error, HTTP status, unreadable answer)",
    data: z.object({
      toolCallId: z.string().describe("The failed request's webhook-id."),
      toolId: z.string(),
      tool: z.string().describe("The tool's name."),
      assistantId: z.string().describe("The assistant's internal id."),
      conversationId: z.string(),
      sessionId: z.string().optional().describe('The voice call, for a call made in one.'),
      source: z.string().describe('Where the assistant was talking: api, widget, playground or phone.'),
      error: z.string().describe("Why it failed (never the answer body beyond the tool's own error)."),
      durationMs: z.number().int(),
    }),
  },
  'call.status_changed': {
    summary: 'A call Parley placed changed status (queued, ringing, in_progress, then how it ended)',
    data: z.object({
      id: z.string().describe('The call (call_...), as GET /api/v1/calls/{callId} shows it.'),
      status: z.enum(['queued', 'ringing', 'in_progress', 'completed', 'busy', 'no_answer', 'failed', 'canceled']),
      assistantId: z.string(),
      to: z.string(),
      from: z.string(),
      answeredBy: z.enum(['human', 'machine', 'fax', 'unknown']).nullable(),
      outcome: z.enum(['answered', 'voicemail', 'busy', 'no_answer', 'failed', 'canceled']).nullable(),
      metadata: z.record(z.string(), z.unknown()),
      maxDurationSeconds: z.number().int().nullable(),
      conversationId: z.string().nullable(),
      sessionId: z.string().nullable(),
      failure: z.string().nullable(),
      transfer: z.object({ to: z.string(), mode: z.literal('cold'), at: z.string() }).nullable(),
      createdAt: z.string(),
      answeredAt: z.string().nullable(),
      endedAt: z.string().nullable(),
    }),
  },
  'call-batch.completed': {
    summary: 'Every contact of a call batch is done (or the batch was canceled), with the outcomes',
    data: z.object({
      id: z.string().describe('The batch (cb_...), as GET /api/v1/call-batches/{batchId} shows it.'),
      status: z.enum(['running', 'paused', 'canceled', 'completed']),
      assistantId: z.string(),
      from: z.string(),
      maxConcurrent: z.number().int(),
      reservedInbound: z.number().int(),
      retry: z.object({
        onNoAnswer: z.boolean(),
        onBusy: z.boolean(),
        attempts: z.number().int(),
        afterMinutes: z.number().int(),
      }),
      window: z
        .object({ days: z.array(z.number().int()), start: z.string(), end: z.string(), timezone: z.string() })
        .nullable(),
      total: z.number().int(),
      progress: z.object({
        pending: z.number().int(),
        calling: z.number().int(),
        done: z.number().int(),
        byOutcome: z.record(z.string(), z.number().int()),
      }),
      createdAt: z.string(),
      completedAt: z.string().nullable(),
    }),
  },
  'conversation.analyzed': {
    summary: 'A conversation ended and was analysed: the end-of-call report',
    data: z.object({
      conversationId: z.string(),
      assistantId: z.string(),
      channel: z.enum(['chat', 'voice']),
      source: z.enum(['api', 'widget', 'playground', 'phone', 'test']),
      startedAt: z.string(),
      endedAt: z.string().describe('The end of its last call; for a chat, its last message.'),
      durationSeconds: z.number().int(),
      billableSeconds: z.number().int().describe('Voice seconds billed over its calls (0 for a chat).'),
      costMicros: z.number().int().describe('Its chat answers plus its calls, from the usage ledger.'),
      endReason: z
        .string()
        .nullable()
        .describe("The last call's end reason (null: the caller hung up); idle for a chat."),
      endedBy: z.enum(['client', 'service', 'reaper']).nullable(),
      fault: z
        .string()
        .nullable()
        .describe('What went wrong, if anything: the last call failure code, session_lost, or model_failure (chat).'),
      calls: z.array(
        z.object({
          sessionId: z.string(),
          startedAt: z.string().nullable(),
          endedAt: z.string().nullable(),
          billableSeconds: z.number().int(),
          costMicros: z.number().int(),
          endReason: z.string().nullable(),
          endedBy: z.enum(['client', 'service', 'reaper']).nullable(),
        }),
      ),
      transcript: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string(), at: z.string() })),
      transcriptTruncated: z.boolean().describe('The conversation has more messages than the report carries (1,000).'),
      toolCalls: z
        .array(
          z.object({
            id: z.string().describe("The tool call id (its request's webhook-id)."),
            name: z.string(),
            arguments: z.unknown(),
            status: z.enum(['pending', 'succeeded', 'failed']),
            result: z.unknown().describe("The tool's result (JSON); null unless succeeded."),
            error: z.string().nullable(),
            durationMs: z.number().int(),
            at: z.string(),
          }),
        )
        .describe("The tools the assistant called in chat or in the call, in order (the owner's server's answers)."),
      analysis: z
        .object({
          conversationId: z.string(),
          status: z.enum(['pending', 'done']),
          trigger: z.string(),
          settingsVersion: z.string(),
          requestedAt: z.string(),
          completedAt: z.string().nullable(),
          engine: z.enum(['local', 'openai']).nullable(),
          model: z.string().nullable(),
          summary: z.string().nullable(),
          structuredData: z.record(z.string(), z.unknown()).nullable(),
          successEvaluation: z
            .object({
              rubric: z.enum(['pass_fail', 'score_1_10', 'descriptive']),
              verdict: z.union([z.boolean(), z.number(), z.string()]),
              rationale: z.string(),
            })
            .nullable(),
          sentiment: z.object({ label: z.enum(['positive', 'neutral', 'negative']), score: z.number() }).nullable(),
          steps: z.array(
            z.object({
              step: z.enum(['summary', 'structuredData', 'successEvaluation', 'sentiment']),
              status: z.enum(['ok', 'failed', 'timed_out', 'skipped']),
              reason: z.string().nullable(),
              notes: z.array(z.string()),
            }),
          ),
          costMicros: z.number().int(),
        })
        .describe('As GET /api/v1/conversations/{conversationId}/analysis answers it.'),
      recordingUrl: z
        .string()
        .optional()
        .describe("A signed link to the last recorded call's audio (WAV), no credentials needed; absent without one."),
      recordingUrlExpiresAt: z.string().optional().describe('When recordingUrl stops working (ISO 8601).'),
    }),
  },
  'scenario-run.completed': {
    summary: 'A scenario run ended: its pass rate and latency figures',
    data: z.object({
      runId: z.string(),
      assistantId: z.string(),
      status: z
        .enum(['done', 'failed'])
        .describe('failed: interrupted (the server stopped) before every scenario ran.'),
      scenarioCount: z.number().int(),
      passRate: z.number().nullable().describe('Passed scenarios over finished ones, 0..1.'),
      passed: z.number().int(),
      failed: z.number().int(),
      errored: z.number().int(),
      turnLatencyP50Ms: z.number().nullable(),
      turnLatencyP95Ms: z.number().nullable(),
    }),
  },
  [TEST_EVENT_TYPE]: {
    summary: 'A test event (POST /api/v1/webhook-endpoints/{endpointId}/test)',
    data: z.object({ endpointId: z.string(), message: z.string() }),
  },
};

function componentName(type: string): string {
  return `WebhookEvent${type
    .split(/[._-]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}`;
}

const HEADERS = {
  'webhook-id': 'The message id: the same on every retry and replay (deduplicate on it).',
  'webhook-timestamp': 'Unix seconds of this attempt.',
  'webhook-signature': 'Space-separated v1,<base64 HMAC-SHA256> of {webhook-id}.{webhook-timestamp}.{body}.',
};

/** Adds `webhooks` (one POST per event) and the event schemas to a v1 OpenAPI document. */
export function withWebhookEvents(document: Record<string, unknown>): Record<string, unknown> {
  const components = document['components'] as { schemas: Record<string, unknown> };
  const webhooks: Record<string, unknown> = {};
  for (const type of [...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE] as WebhookEventType[]) {
    const { summary, data } = dataOf[type];
    const name = componentName(type);
    const schema = z.object({
      type: z.literal(type),
      timestamp: z.string().describe('When it happened (ISO 8601).'),
      data,
    });
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
    delete json['$schema'];
    components.schemas[name] = json;
    webhooks[type] = {
      post: {
        operationId: `webhook${name.slice('WebhookEvent'.length)}`,
        summary,
        description: `Sent as ${type} to endpoints subscribed to it, signed per Standard Webhooks.`,
        tags: ['Webhooks'],
        // Parley calls the receiver: no credential of the receiver's, the signature headers authenticate Parley.
        security: [],
        parameters: Object.entries(HEADERS).map(([header, description]) => ({
          name: header,
          in: 'header',
          required: true,
          description,
          schema: { type: 'string' },
        })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
        },
        responses: {
          '200': { description: 'Any 2xx: delivered.' },
          '410': { description: 'Gone: Parley turns the endpoint off.' },
        },
      },
    };
  }
  return { ...document, webhooks };
}
