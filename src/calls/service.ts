import { randomBytes } from 'node:crypto';
import { getOwnedAssistant } from '../assistants/index.js';
import type { OwnerPrincipal } from '../auth/index.js';
import type { Sql, TransactionSql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import { precheckVoiceCall, type Meter } from '../metering/index.js';
import { dialNumber, type OutboundCarrier } from '../telephony/index.js';
import { enqueueEvent } from '../webhooks/index.js';
import { callsErrors } from './errors.js';
import { presentCall, eventDataOf, type PresentedCall } from './present.js';
import * as q from './queries.js';
import { settleContact } from './batch-queries.js';
import { carrierPaths } from './paths.js';
import { isFinal, type CallStatus } from './status.js';

export interface CallsDeps {
  sql: Sql;
  log: Logger;
  meter: Meter;
  carrier: OutboundCarrier;
}

export interface NewCall {
  assistantId: string;
  to: string;
  from: string;
  variables?: Record<string, string> | undefined;
  metadata?: Record<string, unknown> | undefined;
  voicemail?: 'hangup' | { message: string } | undefined;
  maxDurationSeconds?: number | undefined;
}

export const newCallId = (): string => `call_${randomBytes(12).toString('hex')}`;

/** Queues `call.status_changed` with the call as it now stands (inside the transaction that changed it). */
export async function announce(tx: Sql | TransactionSql, row: q.CallRow): Promise<void> {
  await enqueueEvent(tx, row.accountId, 'call.status_changed', eventDataOf(row));
}

/**
 * Places one call: the assistant and the `from` number are the owner's, the plan admits one more call (minutes,
 * concurrent calls, budget) before the carrier is asked, then the carrier places it with Parley's callbacks (answer,
 * status, and answering-machine detection when a voicemail rule is set). A carrier refusal leaves the call `failed`.
 */
export async function placeCall(
  deps: CallsDeps,
  owner: OwnerPrincipal,
  input: NewCall,
  headers: Readonly<Record<string, string>>,
): Promise<PresentedCall> {
  const assistant = await getOwnedAssistant(deps.sql, owner, input.assistantId);
  const number = await deps.carrier.numberOf(owner.accountId, input.from);
  if (number === undefined) throw callsErrors.fromNotRegistered();
  if (!assistant.settings.voice.enabled) throw callsErrors.voiceDisabled();
  await precheckVoiceCall(deps.meter, owner.accountId, await q.countRingingCalls(deps.sql, owner.accountId));
  const voicemail: q.VoicemailRule | null =
    input.voicemail === undefined
      ? null
      : input.voicemail === 'hangup'
        ? { action: 'hangup' }
        : { action: 'message', message: input.voicemail.message };
  const row = await deps.sql.begin(async (tx) => {
    const created = await q.insertCall(tx, {
      id: newCallId(),
      accountId: owner.accountId,
      assistantId: assistant.id,
      phoneNumberId: number.id,
      toNumber: input.to,
      fromNumber: number.phoneNumber,
      voicemail,
      variables: input.variables ?? {},
      metadata: input.metadata ?? {},
      maxDurationSeconds: input.maxDurationSeconds ?? null,
      publicBase: deps.carrier.publicBase(headers),
    });
    await announce(tx, created);
    return created;
  });
  return presentCall(await dial(deps, row));
}

/** Asks the carrier to place a stored, queued call; a refusal marks it failed (and says so to the owner). */
export async function dial(deps: CallsDeps, row: q.CallRow): Promise<q.CallRow> {
  const log = deps.log.child({ callId: row.id });
  const paths = carrierPaths(row.publicBase, row.id);
  try {
    const placed = await deps.carrier.placeCall(row.phoneNumberId ?? '', {
      to: row.toNumber,
      from: row.fromNumber,
      answerUrl: paths.answer,
      statusUrl: paths.status,
      machineDetectionUrl: row.voicemail === null ? undefined : paths.machine,
      timeLimitSeconds: row.maxDurationSeconds ?? undefined,
    });
    await q.setCarrierCallId(deps.sql, row.id, placed.callSid);
    log.info('outbound call placed');
    return (await q.callById(deps.sql, row.id)) ?? row;
  } catch (err) {
    const status = typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 503;
    const message = err instanceof Error ? err.message : 'The carrier refused the call.';
    log.info({ carrierStatus: status }, 'outbound call refused by the carrier');
    await changeStatus(deps, row.id, 'failed', { failure: message, outcome: 'failed', ended: true });
    throw status >= 500 ? callsErrors.carrierUnavailable() : callsErrors.carrierRefused(message);
  }
}

/**
 * Moves a call to a status (forward only; a final status stays) with `call.status_changed`, in one transaction.
 * Resolves the row as it now stands, and whether it changed.
 */
export async function changeStatus(
  deps: Pick<CallsDeps, 'sql'>,
  id: string,
  status: CallStatus | undefined,
  extra: Omit<q.CallChange, 'status'> = {},
  decide?: (row: q.CallRow) => q.CallChange | undefined,
): Promise<{ row: q.CallRow | undefined; changed: boolean }> {
  return deps.sql.begin(async (tx) => {
    const current = await q.lockCall(tx, id);
    if (current === undefined) return { row: undefined, changed: false };
    const change = decide?.(current) ?? (status === undefined ? extra : { ...extra, status });
    if (change === undefined) return { row: current, changed: false };
    const row = await q.updateCall(tx, id, change);
    const changed = row.status !== current.status || row.answeredBy !== current.answeredBy;
    if (changed) await announce(tx, row);
    // A batch's contact is settled with its call, in the same transaction: retried or done, never both or neither.
    if (isFinal(row.status) && !isFinal(current.status) && row.batchId !== null && row.batchSeq !== null)
      await settleContact(tx, row.batchId, row.batchSeq, row.outcome ?? row.status);
    return { row, changed };
  });
}

export async function getCall(deps: Pick<CallsDeps, 'sql'>, owner: OwnerPrincipal, id: string): Promise<PresentedCall> {
  const row = await q.findCall(deps.sql, owner.accountId, id);
  if (row === undefined) throw callsErrors.notFound();
  return presentCall(row);
}

export async function listCalls(
  deps: Pick<CallsDeps, 'sql'>,
  owner: OwnerPrincipal,
  query: {
    batchId?: string | undefined;
    status?: CallStatus | undefined;
    assistantId?: string | undefined;
    to?: string | undefined;
    limit?: number | undefined;
    cursor?: string | undefined;
  },
): Promise<{ calls: PresentedCall[]; nextCursor: string | null }> {
  const limit = query.limit ?? 50;
  let assistantId: string | undefined;
  if (query.assistantId !== undefined) assistantId = (await getOwnedAssistant(deps.sql, owner, query.assistantId)).id;
  const before = query.cursor === undefined ? undefined : readCursor(query.cursor);
  const rows = await q.listCalls(deps.sql, {
    accountId: owner.accountId,
    status: query.status,
    assistantId,
    to: query.to,
    batchId: query.batchId,
    before,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last !== undefined
      ? Buffer.from(`${last.createdAt.toISOString()}|${last.id}`).toString('base64url')
      : null;
  return { calls: page.map(presentCall), nextCursor };
}

function readCursor(cursor: string): { createdAt: Date; id: string } | undefined {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (id === undefined || !/^call_[0-9a-f]{24}$/.test(id) || Number.isNaN(createdAt.getTime())) return undefined;
  return { createdAt, id };
}

/**
 * Cancels a call: before it was answered the carrier stops ringing and the call is `canceled` now; a live call is
 * hung up (it ends `completed` when the carrier says so). A call already over is 409.
 */
export async function cancelCall(deps: CallsDeps, owner: OwnerPrincipal, id: string): Promise<PresentedCall> {
  const row = await q.findCall(deps.sql, owner.accountId, id);
  if (row === undefined) throw callsErrors.notFound();
  if (isFinal(row.status)) throw callsErrors.alreadyEnded();
  const live = row.status === 'in_progress';
  if (row.carrierCallId !== null && row.phoneNumberId !== null) {
    try {
      await deps.carrier.endCall(row.phoneNumberId, row.carrierCallId, live ? 'completed' : 'canceled');
    } catch (err) {
      const status =
        typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 503;
      if (status >= 500) throw callsErrors.carrierUnavailable();
      // The carrier no longer knows a live call (it just ended): its final callback settles the status.
    }
  }
  if (live) return presentCall((await q.findCall(deps.sql, owner.accountId, id)) ?? row);
  const { row: after } = await changeStatus(deps, id, 'canceled', { outcome: 'canceled', ended: true });
  return presentCall(after ?? row);
}

/**
 * A cold transfer: the live call is redirected to dial `to` (the carrier ends the media stream, so the assistant's
 * part and its billing end there); the call itself goes on until the person hangs up.
 */
export async function transferCall(
  deps: CallsDeps,
  owner: OwnerPrincipal,
  id: string,
  input: { to: string; mode: 'cold' },
): Promise<PresentedCall> {
  const row = await q.findCall(deps.sql, owner.accountId, id);
  if (row === undefined) throw callsErrors.notFound();
  await transferLive(deps, row, input);
  return presentCall((await q.findCall(deps.sql, owner.accountId, id)) ?? row);
}

/**
 * The assistant's built-in `transfer_call` on a call Parley placed: the same cold transfer as the API's, found by the
 * call's voice session. False when that session is not an outbound call's (nothing was done).
 */
export async function transferSessionCall(deps: CallsDeps, voiceSessionId: string, to: string): Promise<boolean> {
  const row = await q.callBySession(deps.sql, voiceSessionId);
  if (row === undefined) return false;
  await transferLive(deps, row, { to, mode: 'cold' });
  return true;
}

/** The carrier redirects the live call to `<Dial>` the number; the call then shows the transfer. */
async function transferLive(deps: CallsDeps, row: q.CallRow, input: { to: string; mode: 'cold' }): Promise<void> {
  if (row.status !== 'in_progress' || row.carrierCallId === null || row.phoneNumberId === null)
    throw callsErrors.notLive(row.status);
  try {
    await deps.carrier.redirectCall(row.phoneNumberId, row.carrierCallId, dialNumber(input.to, row.fromNumber));
  } catch (err) {
    const status = typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 503;
    throw status >= 500 ? callsErrors.carrierUnavailable() : callsErrors.carrierRefused((err as Error).message);
  }
  await q.setTransferred(deps.sql, row.id, input.to);
  deps.log.info({ callId: row.id, mode: input.mode }, 'call transferred');
}
