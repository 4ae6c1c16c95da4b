import { z } from 'zod';
import { assistantIdParam, pageQuerySchema } from '../assistants/index.js';
import { dateParam } from '../conversations/index.js';
import { isStorableDate } from '../http/index.js';

const count = z.number().int();
const rate = z.number().nullable().describe('0–1; null when there is nothing to divide.');
const ms = z.number().nullable().describe('Milliseconds; null without voice turns.');

export const overviewQuerySchema = z.object({
  date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date (2026-11-26)')
    .refine((v) => isStorableDate(new Date(`${v}T00:00:00Z`)), { error: 'must be a real date (2026-11-26)' })
    .optional()
    .describe('The UTC day to show (YYYY-MM-DD); default today.'),
});

const endReasonCount = z.object({
  reason: z
    .string()
    .describe('Why the service ended the call (idle, max_duration, usage_limit, ...); hangup: the caller hung up.'),
  count,
});

export const overviewSchema = z
  .object({
    date: z.string().describe('The UTC day shown (YYYY-MM-DD).'),
    from: z.string(),
    to: z.string(),
    calls: count.describe('Voice calls started that day (all transports: browser, WebSocket, phone).'),
    chats: count.describe('Conversations started that day without a voice call.'),
    questions: count.describe("Visitors' messages and spoken turns that day."),
    answered: count.describe('Answers grounded in the documents that day.'),
    noAnswer: count,
    modelFailures: count,
    answeredRate: rate.describe(
      'Answered over questions asked (a question never answered counts against); null without questions.',
    ),
    billableSeconds: count.describe('Seconds of those calls with a connected caller.'),
    turnLatency: z.object({
      turns: count.describe('Voice turns measured (end of the caller’s speech to the first answer audio).'),
      p50Ms: ms,
      p95Ms: ms,
    }),
    spend: z.object({
      costMicros: count.describe('What that day cost, in micro-dollars (settled usage: hosted providers only).'),
      byKind: z.array(z.object({ kind: z.string().describe('chat, voice, ingestion or eval'), costMicros: count })),
    }),
    endReasons: z.array(endReasonCount).describe('How the day’s finished calls ended, the commonest first.'),
    assistants: z
      .array(
        z.object({
          assistantId: z.string(),
          publicId: z.string(),
          name: z.string(),
          calls: count,
          chats: count,
          questions: count,
          answeredRate: rate,
          spendMicros: count,
        }),
      )
      .describe('The same day per assistant, the busiest first; assistants with nothing that day are left out.'),
  })
  .meta({ id: 'Overview' });

export const CALL_SOURCES = ['api', 'widget', 'playground', 'phone'] as const;
export const CALL_TRANSPORTS = ['webrtc', 'websocket', 'phone'] as const;

export const callQuerySchema = pageQuerySchema.extend({
  assistantId: assistantIdParam.optional(),
  source: z.enum(CALL_SOURCES).optional().describe('Where the caller came from.'),
  transport: z.enum(CALL_TRANSPORTS).optional().describe('How the audio travelled.'),
  phoneNumber: z
    .string()
    .max(40)
    .regex(/^\+?[0-9 ().-]{3,40}$/, 'must be digits of a phone number (at least 3)')
    .refine((v) => v.replace(/[^0-9]/g, '').length >= 3, { error: 'must hold at least 3 digits' })
    .optional()
    .describe(
      'Digits of a number: calls from it (the caller’s number) or taken by phone by the assistant it routes to.',
    ),
  endReason: z
    .string()
    .regex(/^[a-z_]{1,40}$/, 'must be an end reason (idle, max_duration, ..., or hangup)')
    .optional()
    .describe(
      'Why it ended (hangup: the caller hung up; otherwise the service’s reason, such as idle or usage_limit).',
    ),
  from: dateParam(false).optional().describe('Started at or after (a date, or an ISO 8601 date and time).'),
  to: dateParam(true).optional().describe('Started before (a date counts as the whole day).'),
});

export const callSchema = z
  .object({
    sessionId: z.string(),
    assistantId: z.string().describe('Internal id of the assistant.'),
    assistantPublicId: z.string().describe('The asst_... id (embed, widget).'),
    assistantName: z.string(),
    conversationId: z.string().nullable(),
    source: z.string().describe('api, widget, playground or phone.'),
    transport: z.string().nullable().describe('webrtc, websocket or phone; null when not recorded.'),
    callerNumber: z
      .string()
      .nullable()
      .describe('A phone call\'s caller number, masked ("+1 555 ••• 0123"); null for every other source.'),
    state: z.enum(['active', 'ended', 'lost']),
    endReason: z
      .string()
      .nullable()
      .describe('Why it ended: hangup (the caller), or the service’s reason; null while it runs.'),
    endedBy: z.string().nullable(),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    durationSeconds: z.number().int().nullable().describe('From the start to the end; null while the call runs.'),
    billableSeconds: count,
    costMicros: count.describe('What the call cost, in micro-dollars (its settled usage events).'),
    turns: count.describe('Turns measured in its timeline.'),
    latencyP50Ms: ms.describe('Its median turn latency; null without turns.'),
    timelineUrl: z.string(),
  })
  .meta({ id: 'CallLogEntry' });
