import { hangUpCall, sayThenHangUp, telephonyErrors } from '../telephony/index.js';
import type { CallsDeps } from './service.js';
import { changeStatus } from './service.js';
import { carrierPaths } from './paths.js';
import * as q from './queries.js';
import { answeredByOfCarrier, isFinal, movesForward, outcomeOf, statusOfCarrier } from './status.js';

/** A request the carrier made about one call: its form parameters and where it came from. */
export interface CarrierCallback {
  callId: string;
  params: Record<string, string>;
  signature: string | undefined;
  headers: Readonly<Record<string, string>>;
  ip: string;
  host: string | undefined;
  signal: AbortSignal;
}

/** The call, once the carrier's signature over the URL Parley gave it checks out; else 403 (nothing learned). */
async function signedCall(deps: CallsDeps, callback: CarrierCallback, which: 'answer' | 'status' | 'machine') {
  const row = /^call_[0-9a-f]{24}$/.test(callback.callId) ? await q.callById(deps.sql, callback.callId) : undefined;
  if (row === undefined || row.phoneNumberId === null) throw telephonyErrors.signatureInvalid();
  const url = carrierPaths(row.publicBase, row.id)[which];
  if (!(await deps.carrier.signedBy(row.phoneNumberId, url, callback.params, callback.signature)))
    throw telephonyErrors.signatureInvalid();
  return row;
}

/**
 * The callee answered: the call is minted onto the phone transport like an inbound one (the callee's number as the
 * caller's), and the carrier is told to open the media stream. A call canceled meanwhile hangs up; one the assistant
 * cannot take now hears the neutral refusal and is `failed`.
 */
export async function answered(deps: CallsDeps, callback: CarrierCallback): Promise<string> {
  const row = await signedCall(deps, callback, 'answer');
  if (isFinal(row.status)) return hangUpCall();
  const connected = await deps.carrier.connect(row.phoneNumberId!, row.assistantId, {
    callerNumber: row.toNumber,
    headers: callback.headers,
    ip: callback.ip,
    host: callback.host,
    signal: callback.signal,
    variables: row.variables,
  });
  if (connected === undefined) return hangUpCall();
  if (connected.kind === 'refused') {
    await changeStatus(deps, row.id, 'failed', {
      outcome: 'failed',
      failure: `The assistant could not take the call (${connected.code}).`,
      ended: true,
    });
    return connected.twiml;
  }
  await changeStatus(deps, row.id, undefined, {}, (current) => ({
    ...(movesForward(current.status, 'in_progress') ? { status: 'in_progress' as const } : {}),
    answered: true,
    voiceSessionId: connected.sessionId,
    conversationId: connected.conversationId,
  }));
  return connected.twiml;
}

/** The carrier's status callback: the call moves forward (never back); a final status settles its outcome. */
export async function statusChanged(deps: CallsDeps, callback: CarrierCallback): Promise<void> {
  const row = await signedCall(deps, callback, 'status');
  const status = statusOfCarrier(callback.params['CallStatus']);
  const answeredBy = answeredByOfCarrier(callback.params['AnsweredBy']);
  if (status === undefined) return;
  await changeStatus(deps, row.id, undefined, {}, (current) => {
    if (!movesForward(current.status, status)) return undefined;
    const by = answeredBy ?? current.answeredBy;
    return {
      status,
      ...(answeredBy !== undefined && current.answeredBy === null ? { answeredBy } : {}),
      ...(status === 'in_progress' ? { answered: true } : {}),
      ...(isFinal(status) ? { ended: true, outcome: outcomeOf(status, by, true) } : {}),
    };
  });
}

/**
 * The carrier's asynchronous answering-machine verdict. The assistant is already talking (a person is never kept
 * waiting); on a machine the call's voicemail rule runs: hang up, or replace the stream with the message (the
 * carrier's detection reported the end of the greeting, so it is said after the beep) and hang up.
 */
export async function machineDetected(deps: CallsDeps, callback: CarrierCallback): Promise<void> {
  const row = await signedCall(deps, callback, 'machine');
  const answeredBy = answeredByOfCarrier(callback.params['AnsweredBy']);
  if (answeredBy === undefined) return;
  const { row: after } = await changeStatus(deps, row.id, undefined, {}, (current) =>
    current.answeredBy === answeredBy ? undefined : { answeredBy },
  );
  const call = after ?? row;
  if (answeredBy === 'human' || call.voicemail === null || isFinal(call.status) || call.carrierCallId === null) return;
  const log = deps.log.child({ callId: call.id });
  try {
    if (call.voicemail.action === 'hangup')
      await deps.carrier.endCall(call.phoneNumberId!, call.carrierCallId, 'completed');
    else
      await deps.carrier.redirectCall(call.phoneNumberId!, call.carrierCallId, sayThenHangUp(call.voicemail.message));
    log.info({ action: call.voicemail.action }, 'a machine answered: voicemail rule carried out');
  } catch (err) {
    log.warn({ err }, 'the carrier did not take the voicemail rule');
  }
}
