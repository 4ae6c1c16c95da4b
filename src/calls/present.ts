import { z } from 'zod';
import type { CallRow } from './queries.js';
import { ANSWERED_BY, CALL_OUTCOMES, CALL_STATUSES, type AnsweredBy, type CallOutcome } from './status.js';

export const voicemailSchema = z
  .union([
    z.literal('hangup'),
    z.object({
      message: z
        .string()
        .min(1)
        .max(1000)
        .describe('Said after the answering machine\u2019s beep, then the call hangs up.'),
    }),
  ])
  .describe(
    "What to do when a machine answers (the carrier's answering-machine detection): hang up, or leave this message after the beep. Omitted: the assistant talks to whoever answers.",
  );

export const callSchema = z
  .object({
    id: z.string().describe('call_...'),
    status: z.enum(CALL_STATUSES),
    assistantId: z.string(),
    to: z.string().describe('E.164.'),
    from: z.string().describe('E.164: the registered number that placed the call.'),
    answeredBy: z.enum(ANSWERED_BY).nullable().describe('What answered, once the carrier knows (detection on).'),
    outcome: z.enum(CALL_OUTCOMES).nullable().describe('How the call ended; null until it has.'),
    voicemail: voicemailSchema.nullable(),
    variables: z.record(z.string(), z.string()),
    metadata: z.record(z.string(), z.unknown()),
    maxDurationSeconds: z.number().int().nullable(),
    conversationId: z.string().nullable().describe('The conversation, once the callee answered.'),
    sessionId: z.string().nullable().describe('The voice session, once the callee answered.'),
    failure: z.string().nullable().describe('Why the call failed, when the carrier or the assistant said.'),
    transfer: z
      .object({ to: z.string(), mode: z.literal('cold'), at: z.string() })
      .nullable()
      .describe('Where the call was handed to a person, once it was (POST /api/v1/calls/{callId}/transfer).'),
    createdAt: z.string(),
    answeredAt: z.string().nullable(),
    endedAt: z.string().nullable(),
  })
  .meta({ id: 'Call' });

export type PresentedCall = z.output<typeof callSchema>;

export function presentCall(row: CallRow): PresentedCall {
  return {
    id: row.id,
    status: row.status,
    assistantId: row.assistantId,
    to: row.toNumber,
    from: row.fromNumber,
    answeredBy: (row.answeredBy as AnsweredBy | null) ?? null,
    outcome: (row.outcome as CallOutcome | null) ?? null,
    voicemail:
      row.voicemail === null ? null : row.voicemail.action === 'hangup' ? 'hangup' : { message: row.voicemail.message },
    variables: row.variables,
    metadata: row.metadata,
    maxDurationSeconds: row.maxDurationSeconds,
    conversationId: row.conversationId,
    sessionId: row.voiceSessionId,
    failure: row.failure,
    transfer:
      row.transferredTo === null || row.transferredAt === null
        ? null
        : { to: row.transferredTo, mode: 'cold' as const, at: row.transferredAt.toISOString() },
    createdAt: row.createdAt.toISOString(),
    answeredAt: row.answeredAt?.toISOString() ?? null,
    endedAt: row.endedAt?.toISOString() ?? null,
  };
}

/** The webhook's data: the call as the API shows it, minus the variables (they may hold a contact's details). */
export function eventDataOf(row: CallRow): Record<string, unknown> {
  const { variables: _variables, voicemail: _voicemail, ...rest } = presentCall(row);
  return rest;
}
