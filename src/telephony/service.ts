import { randomBytes } from 'node:crypto';
import { AdmissionErrorCodes, type Admission } from '../admission/index.js';
import { getOwnedAssistant } from '../assistants/index.js';
import type { OwnerPrincipal } from '../auth/index.js';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import { isAppError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import {
  carrierSignature,
  signatureMatches,
  TWILIO_TRANSPORT,
  type TwilioTransport,
  type VoiceService,
} from '../voice/index.js';
import type { SecretBox } from '../webhooks/index.js';
import { telephonyErrors } from './errors.js';
import * as q from './queries.js';
import { connectStream, refuseCall, rejectCall, RECORDING_NOTICE } from './twiml.js';

export interface TelephonyDeps {
  sql: Sql;
  config: Readonly<Config>;
  log: Logger;
  voice: VoiceService;
  phone: TwilioTransport;
  tokens: SecretBox;
  admission?: Admission | undefined;
}

export const VOICE_WEBHOOK_PATH = '/api/v1/telephony/twilio/voice';
const ACCOUNT_SID = /^AC[0-9a-fA-F]{32}$/;

/**
 * The base the carrier is given and signs over: PUBLIC_URL when set; else the request's Host under the scheme the
 * client used (a trusted proxy's `X-Forwarded-Proto`, else plain HTTP: a local try).
 */
export function publicBase(config: Readonly<Config>, headers: Readonly<Record<string, string>>): string {
  if (config.PUBLIC_URL !== undefined) return config.PUBLIC_URL.replace(/\/+$/, '');
  const scheme = forwardedScheme(config, headers) ?? 'http';
  return `${scheme}://${headers['host'] ?? `${config.HOST}:${config.PORT}`}`;
}

/** The first proxy's `X-Forwarded-Proto` when TRUST_PROXY (http or https), else undefined. */
function forwardedScheme(config: Readonly<Config>, headers: Readonly<Record<string, string>>): string | undefined {
  if (!config.TRUST_PROXY) return undefined;
  const proto = headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase();
  return proto === 'https' || proto === 'http' ? proto : undefined;
}

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/**
 * Whether the URL a carrier would call is known: PUBLIC_URL, a trusted proxy's scheme, or a loopback host (a local
 * try, plain HTTP). Anything else (a public Host reached through an untrusted hop) could be TLS the server never
 * sees: every webhook would then be signed over https and answered 403.
 */
function carrierUrlKnown(config: Readonly<Config>, headers: Readonly<Record<string, string>>): boolean {
  if (config.PUBLIC_URL !== undefined || forwardedScheme(config, headers) !== undefined) return true;
  const host = headers['host'];
  return host === undefined || LOOPBACK_HOST.test(host);
}

export function presentNumber(row: q.PhoneNumberRow, base: string) {
  return {
    id: row.id,
    phoneNumber: row.phoneNumber,
    assistantId: row.assistantId,
    provider: row.provider,
    voiceUrl: `${base}${VOICE_WEBHOOK_PATH}`,
    createdAt: row.createdAt.toISOString(),
  };
}

export interface NewNumber {
  phoneNumber: string;
  assistantId: string;
  provider: 'twilio';
  accountSid: string;
  authToken: string;
}

export async function createNumber(
  deps: TelephonyDeps,
  owner: OwnerPrincipal,
  input: NewNumber,
  headers: Readonly<Record<string, string>>,
) {
  if (!carrierUrlKnown(deps.config, headers)) throw telephonyErrors.publicUrlRequired();
  const assistant = await getOwnedAssistant(deps.sql, owner, input.assistantId);
  const id = `pn_${randomBytes(12).toString('hex')}`;
  const row = await q.insertNumber(deps.sql, {
    id,
    accountId: owner.accountId,
    assistantId: assistant.id,
    phoneNumber: input.phoneNumber,
    provider: input.provider,
    carrierAccount: input.accountSid,
    authTokenSealed: deps.tokens.seal(input.authToken, id),
  });
  if (row === undefined) throw telephonyErrors.taken();
  return presentNumber(row, publicBase(deps.config, headers));
}

export async function getNumber(
  deps: TelephonyDeps,
  owner: OwnerPrincipal,
  id: string,
  headers: Readonly<Record<string, string>>,
) {
  const row = await q.findNumber(deps.sql, owner.accountId, id);
  if (row === undefined) throw telephonyErrors.notFound();
  return presentNumber(row, publicBase(deps.config, headers));
}

export async function listNumbers(
  deps: TelephonyDeps,
  owner: OwnerPrincipal,
  headers: Readonly<Record<string, string>>,
) {
  const base = publicBase(deps.config, headers);
  return (await q.listNumbers(deps.sql, owner.accountId)).map((row) => presentNumber(row, base));
}

export async function deleteNumber(deps: TelephonyDeps, owner: OwnerPrincipal, id: string): Promise<void> {
  if (!(await q.deleteNumber(deps.sql, owner.accountId, id))) throw telephonyErrors.notFound();
}

export interface IncomingCall {
  params: Record<string, string>;
  signature: string | undefined;
  host: string | undefined;
  headers: Readonly<Record<string, string>>;
  ip: string;
  signal: AbortSignal;
}

/**
 * The carrier's call webhook. The signature is checked first, with the tokens of the numbers registered under the
 * request's AccountSid (none, or no match: 403, nothing started). A signed call to an unknown number is rejected;
 * a call the assistant cannot take now hears a short neutral refusal; otherwise a `pcmu` 8 kHz call is minted onto
 * the phone transport and the carrier is told to open its stream, the control token as a stream parameter.
 */
export async function answerCall(deps: TelephonyDeps, call: IncomingCall): Promise<string> {
  // A slot of the mints' pool before any query (src/admission), queued per carrier account: a burst of calls waits
  // as a burst of mints does. A busy instance answers the caller with the neutral refusal, never a 5xx the carrier
  // would read out.
  let release: (() => void) | undefined;
  try {
    release = await deps.admission?.acquire(`carrier:${call.params['AccountSid'] ?? ''}`, call.signal);
  } catch (err) {
    if (isAppError(err) && err.code === AdmissionErrorCodes.OVERLOADED) return refuseCall();
    throw err;
  }
  try {
    return await answerAdmitted(deps, call);
  } finally {
    release?.();
  }
}

async function answerAdmitted(deps: TelephonyDeps, call: IncomingCall): Promise<string> {
  const { params } = call;
  const url = `${publicBase(deps.config, call.headers)}${VOICE_WEBHOOK_PATH}`;
  // Unsigned yet, so anything: only a well-formed SID is looked up (a NUL would reach the database as an error).
  const accountSid = params['AccountSid'] ?? '';
  const numbers = ACCOUNT_SID.test(accountSid) ? await q.numbersOfCarrierAccount(deps.sql, 'twilio', accountSid) : [];
  let signedBy: string | undefined;
  for (const row of numbers) {
    const token = openToken(deps, row);
    if (token !== undefined && signatureMatches(carrierSignature(token, url, params), call.signature)) {
      signedBy = token;
      break;
    }
  }
  if (signedBy === undefined) throw telephonyErrors.signatureInvalid();
  const to = params['To'] ?? '';
  const number = numbers.find((row) => row.phoneNumber === to && openToken(deps, row) === signedBy);
  if (number === undefined) return rejectCall();
  const from = params['From'];
  const connected = await connectPhoneCall(deps, number, signedBy, {
    callerNumber: from,
    headers: call.headers,
    ip: call.ip,
    host: call.host,
    signal: call.signal,
  });
  return connected.twiml;
}

/** The request a carrier made for a call that is being answered (inbound, or an outbound call the callee took). */
export interface PhoneCallRequest {
  /** The other party's number (E.164): the caller inbound, the callee outbound. */
  callerNumber: string | undefined;
  headers: Readonly<Record<string, string>>;
  ip: string;
  host: string | undefined;
  signal: AbortSignal;
  /** An outbound call's variables, filled into the assistant's first message. */
  variables?: Readonly<Record<string, string>> | undefined;
}

export type ConnectedCall =
  | { kind: 'connected'; sessionId: string; conversationId: string; twiml: string }
  | { kind: 'refused'; code: string; twiml: string };

/**
 * Mints a `pcmu` 8 kHz call onto the phone transport for a number's assistant and answers the TwiML that opens the
 * carrier's stream (the control token as a stream parameter). A call the assistant cannot take now is refused with
 * a short neutral TwiML refusal, never a 4xx/5xx the carrier would read out.
 */
export async function connectPhoneCall(
  deps: TelephonyDeps,
  number: q.PhoneNumberRow,
  authToken: string,
  call: PhoneCallRequest,
): Promise<ConnectedCall> {
  const log = deps.log.child({ phoneNumberId: number.id, assistantId: number.assistantId });
  const from = call.callerNumber;
  try {
    const minted = await deps.voice.mint(
      {
        assistantId: number.assistantId,
        capabilities: ['playback_gate'],
        // The notice below is said before the stream starts: on a phone call it stands for a widget's consent.
        recordingConsent: true,
        audio: { format: 'pcmu', sampleRateHz: 8000 },
        callerTransport: TWILIO_TRANSPORT,
        ...(from !== undefined && /^\+?[0-9]{3,20}$/.test(from) ? { callerNumber: from } : {}),
        ...(call.variables !== undefined ? { variables: call.variables } : {}),
      },
      {
        principal: { kind: 'phone', accountId: number.accountId },
        request: { headers: call.headers, ip: call.ip, host: call.host },
        signal: call.signal,
        log,
      },
    );
    // A phone mint names the phone transport, so it always answers a stream (never a WebRTC answer).
    const stream = minted.stream;
    if (stream === undefined) throw new Error('a phone mint answered no stream');
    deps.phone.expect(minted.sessionId, stream.url, authToken);
    log.info({ voiceSessionId: minted.sessionId }, 'phone call answered');
    const twiml = connectStream(
      stream.url,
      { token: minted.controlToken, sessionId: minted.sessionId },
      minted.recording.enabled ? RECORDING_NOTICE : undefined,
    );
    return { kind: 'connected', sessionId: minted.sessionId, conversationId: minted.conversationId, twiml };
  } catch (err) {
    if (!isAppError(err)) throw err;
    // Over the minutes or the concurrent calls, voice off, the provider down: the caller hears a neutral refusal,
    // never a 4xx/5xx (the carrier would play its own error) and never a word of plans (docs/house-rules.md rule 20).
    log.info({ code: err.code }, 'phone call refused');
    return { kind: 'refused', code: err.code, twiml: refuseCall() };
  }
}

export function openToken(deps: Pick<TelephonyDeps, 'tokens'>, row: q.PhoneNumberRow): string | undefined {
  try {
    return deps.tokens.open(row.authTokenSealed, row.id);
  } catch {
    return undefined;
  }
}
