import { z } from 'zod';
import type { BatchRow, Progress } from './batch-queries.js';
import { voicemailSchema } from './present.js';
import { variablesSchema } from './routes-shared.js';

const e164 = z
  .string()
  .regex(/^\+[1-9][0-9]{6,14}$/, 'must be an E.164 number (+ and 7 to 15 digits)')
  .describe('E.164, e.g. +15550100123.');
const hhmm = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'must be HH:MM (24 h)');

export const retrySchema = z
  .object({
    onNoAnswer: z.boolean().default(false),
    onBusy: z.boolean().default(false),
    attempts: z.number().int().min(1).max(10).default(1).describe('Total tries per contact.'),
    afterMinutes: z.number().int().min(0).max(1440).default(60).describe('Wait before the next try.'),
  })
  .describe('Which outcomes are tried again, how often and after how long.');

export const windowSchema = z
  .object({
    days: z.array(z.number().int().min(0).max(6)).min(1).max(7).describe('0 = Sunday ... 6 = Saturday.'),
    start: hhmm,
    end: hhmm,
    timezone: z
      .string()
      .min(1)
      .max(64)
      .refine((tz) => {
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: tz });
          return true;
        } catch {
          return false;
        }
      }, 'must be an IANA time zone, e.g. Europe/Paris'),
  })
  .describe('Calls start only on these days between start and end, local time.');

export const createBatchBody = z.object({
  assistantId: z.string().min(1).max(100).describe('Public asst_ or internal id of an assistant of yours.'),
  from: e164.describe('A phone number registered to your account: every call of the batch comes from it.'),
  contacts: z
    .array(z.object({ to: e164, variables: variablesSchema.optional() }))
    .min(1)
    .max(10_000),
  maxConcurrent: z.number().int().min(1).max(100).describe('Calls of this batch on the line or ringing at once.'),
  reservedInbound: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(0)
    .describe("Of the plan's concurrent calls, how many the batch leaves free for inbound calls."),
  retry: retrySchema.optional(),
  window: windowSchema.optional(),
  voicemail: voicemailSchema.optional(),
});

const outcomes = z.object({
  answered: z.number().int(),
  voicemail: z.number().int(),
  busy: z.number().int(),
  no_answer: z.number().int(),
  failed: z.number().int(),
  canceled: z.number().int(),
});

export const batchSchema = z
  .object({
    id: z.string().describe('cb_...'),
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
    window: windowSchema.nullable(),
    total: z.number().int(),
    progress: z
      .object({
        pending: z.number().int().describe('Contacts waiting for a (first or next) try.'),
        calling: z.number().int(),
        done: z.number().int(),
        byOutcome: outcomes.describe('Contacts done, by the outcome of their last call.'),
      })
      .describe('Contacts by where they stand.'),
    createdAt: z.string(),
    completedAt: z.string().nullable(),
  })
  .meta({ id: 'CallBatch' });

export type PresentedBatch = z.output<typeof batchSchema>;

export function presentBatch(row: BatchRow, progress: Progress): PresentedBatch {
  const by = progress.byOutcome;
  return {
    id: row.id,
    status: row.status,
    assistantId: row.assistantId,
    from: row.fromNumber,
    maxConcurrent: row.maxConcurrent,
    reservedInbound: row.reservedInbound,
    retry: row.retry,
    window: row.callWindow,
    total: row.total,
    progress: {
      pending: progress.pending,
      calling: progress.calling,
      done: progress.done,
      byOutcome: {
        answered: by['answered'] ?? 0,
        voicemail: by['voicemail'] ?? 0,
        busy: by['busy'] ?? 0,
        no_answer: by['no_answer'] ?? 0,
        failed: by['failed'] ?? 0,
        canceled: by['canceled'] ?? 0,
      },
    },
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}
