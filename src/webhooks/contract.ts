import { z } from 'zod';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events.js';

/**
 * The events Parley POSTs to webhook endpoints, as OpenAPI 3.1 `webhooks` of the v1 document: what a receiver gets
 * is part of the contract (and of the SDK's generated types) like what the API answers.
 */
const source = z.enum(['api', 'widget', 'playground']);
const started = {
  sessionId: z.string(),
  conversationId: z.string().nullable(),
  assistantId: z.string().describe("The assistant's internal id (as in Document.assistantId)."),
  source,
  transport: z.string().describe('How the caller reached the call (websocket: the media WebSocket).'),
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
  [TEST_EVENT_TYPE]: {
    summary: 'A test event (POST /api/v1/webhook-endpoints/{endpointId}/test)',
    data: z.object({ endpointId: z.string(), message: z.string() }),
  },
};

function componentName(type: string): string {
  return `WebhookEvent${type
    .split(/[._]/)
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
