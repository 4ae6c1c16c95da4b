import type { Assistant } from '../../src/assistants/index.js';
import { linearToMulaw } from '../../src/providers/voice/g711.js';
import {
  callParams as carrierCallParams,
  CarrierStream,
  postWebhook,
  readTwiml,
  VOICE_WEBHOOK_PATH,
  type Playback,
} from '../../sdk/src/cli/phone/carrier.js';
import type { TestApp } from '../helpers/app.js';
import { bearer, type TestOwner } from '../helpers/identity.js';
import { post, type Minted } from '../voice/helpers.js';

/** A test carrier: what Twilio does for a registered number (signed webhook, then the signed media stream). */
export const ACCOUNT_SID = 'AC' + '0123456789abcdef'.repeat(2);
export const AUTH_TOKEN = 'carrier-auth-token-0123456789';
let numberCounter = 0;

export async function addNumber(
  app: TestApp,
  owner: TestOwner,
  assistant: Assistant,
  options: { accountSid?: string; authToken?: string } = {},
): Promise<{ id: string; phoneNumber: string; voiceUrl: string }> {
  const phoneNumber = `+1555${String(Date.now() % 1_000_000).padStart(6, '0')}${(++numberCounter % 10).toString()}`;
  const res = await post(
    app.url,
    '/api/v1/phone-numbers',
    {
      phoneNumber,
      assistantId: assistant.publicId,
      provider: 'twilio',
      accountSid: options.accountSid ?? ACCOUNT_SID,
      authToken: options.authToken ?? AUTH_TOKEN,
    },
    bearer(owner.secret),
  );
  if (res.status !== 201) throw new Error(`adding a number failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** POSTs the call webhook as the carrier does (form-encoded, signed unless `signature` is given). */
export function callWebhook(
  app: TestApp,
  params: Record<string, string>,
  options: { signature?: string | null; authToken?: string } = {},
): Promise<{ status: number; text: string }> {
  return postWebhook(`${app.url}${VOICE_WEBHOOK_PATH}`, params, options.authToken ?? AUTH_TOKEN, options);
}

export function callParams(to: string, from = '+15550100123'): Record<string, string> {
  return carrierCallParams(ACCOUNT_SID, to, from);
}

/** The stream the TwiML names, with its parameters (the control token). */
export function streamOfTwiml(twiml: string): { url: string; token: string; sessionId: string } | undefined {
  const answer = readTwiml(twiml);
  if (answer.kind !== 'stream') return undefined;
  const { token, sessionId } = answer.parameters;
  if (token === undefined || sessionId === undefined) return undefined;
  return { url: answer.url, token, sessionId };
}

/** A call to a fresh number of this assistant, answered: the Minted shape the voice tests use. */
export async function phoneMint(app: TestApp, owner: TestOwner, assistant: Assistant): Promise<Minted> {
  const number = await addNumber(app, owner, assistant);
  const answer = await callWebhook(app, callParams(number.phoneNumber));
  const stream = streamOfTwiml(answer.text);
  if (answer.status !== 200 || stream === undefined) throw new Error(`the call was not answered: ${answer.text}`);
  return {
    sessionId: stream.sessionId,
    conversationId: '',
    controlToken: stream.token,
    stream: { url: stream.url, protocol: 'twilio.media-stream' },
  };
}

export interface TestCarrierStream {
  ws: CarrierStream['ws'];
  stream: CarrierStream;
  messages: any[];
  closed: Promise<{ code: number; reason: string }>;
  /** Assistant audio received (μ-law bytes). */
  heardBytes(): number;
  clears(): number;
  send(message: unknown): void;
  media(mulaw: Buffer): void;
}

/**
 * Opens the carrier's stream (signed over its URL) with the simulator's carrier core, having said `connected` and
 * `start` with the token. Marks are echoed at once (audio "played" as it comes) unless `playback` says otherwise.
 */
export async function openCarrierStream(
  url: string,
  token: string,
  options: { authToken?: string; signature?: string; playback?: Playback } = {},
): Promise<TestCarrierStream> {
  const stream = await CarrierStream.open({
    url,
    authToken: options.authToken ?? AUTH_TOKEN,
    accountSid: ACCOUNT_SID,
    parameters: { token },
    playback: options.playback ?? 'instant',
    keepMessages: true,
    ...(options.signature !== undefined ? { signature: options.signature } : {}),
  });
  return {
    ws: stream.ws,
    stream,
    messages: stream.messages,
    closed: stream.closed,
    heardBytes: () => stream.receivedBytes,
    clears: () => stream.clears,
    send: (m) => stream.send(m),
    media: (mulaw) => stream.media(mulaw),
  };
}

/** 20 ms μ-law frames of a square wave at speech level (the simulator hears speech), or of silence. */
export function mulawSpeech(frames: number): Buffer[] {
  const out: Buffer[] = [];
  for (let f = 0; f < frames; f++) {
    const frame = Buffer.alloc(160);
    for (let i = 0; i < 160; i++) frame[i] = linearToMulaw(i % 14 < 7 ? 8000 : -8000);
    out.push(frame);
  }
  return out;
}

export function mulawSilence(frames: number): Buffer[] {
  return Array.from({ length: frames }, () => Buffer.alloc(160, linearToMulaw(0)));
}
