import WebSocket from 'ws';
import type { Assistant } from '../../src/assistants/index.js';
import { linearToMulaw } from '../../src/providers/voice/g711.js';
import { carrierSignature } from '../../src/voice/index.js';
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
export async function callWebhook(
  app: TestApp,
  params: Record<string, string>,
  options: { signature?: string | null; authToken?: string } = {},
): Promise<{ status: number; text: string }> {
  const url = `${app.url}/api/v1/telephony/twilio/voice`;
  const signature =
    options.signature === undefined
      ? carrierSignature(options.authToken ?? AUTH_TOKEN, url, params)
      : options.signature;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(signature === null ? {} : { 'x-twilio-signature': signature }),
    },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, text: await res.text() };
}

export function callParams(to: string, from = '+15550100123'): Record<string, string> {
  return {
    AccountSid: ACCOUNT_SID,
    CallSid: 'CA' + Math.random().toString(16).slice(2).padEnd(32, '0'),
    From: from,
    To: to,
    CallStatus: 'ringing',
    Direction: 'inbound',
  };
}

/** The stream the TwiML names, with its parameters (the control token). */
export function streamOfTwiml(twiml: string): { url: string; token: string; sessionId: string } | undefined {
  const url = /<Stream url="([^"]+)"/.exec(twiml)?.[1];
  const token = /<Parameter name="token" value="([^"]+)"/.exec(twiml)?.[1];
  const sessionId = /<Parameter name="sessionId" value="([^"]+)"/.exec(twiml)?.[1];
  if (url === undefined || token === undefined || sessionId === undefined) return undefined;
  return { url: url.replace(/&amp;/g, '&'), token, sessionId };
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

export interface CarrierStream {
  ws: WebSocket;
  messages: any[];
  closed: Promise<{ code: number; reason: string }>;
  /** Assistant audio received (μ-law bytes). */
  heardBytes(): number;
  clears(): number;
  send(message: unknown): void;
  media(mulaw: Buffer): void;
}

/**
 * Opens the carrier's stream (signed over its URL) and, unless `start: false`, says `connected` and `start` with
 * the token. Marks are echoed at once (audio "played" as it comes) unless `echoMarks: false`.
 */
export function openCarrierStream(
  url: string,
  token: string,
  options: { authToken?: string; signature?: string; echoMarks?: boolean } = {},
): Promise<CarrierStream> {
  const signature = options.signature ?? carrierSignature(options.authToken ?? AUTH_TOKEN, url);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'x-twilio-signature': signature }, perMessageDeflate: false });
    const messages: any[] = [];
    const streamSid = 'MZ' + Math.random().toString(16).slice(2);
    ws.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8'));
      messages.push(message);
      if (message.event === 'mark' && options.echoMarks !== false) {
        ws.send(JSON.stringify({ event: 'mark', streamSid, mark: message.mark }));
      }
    });
    const closed = new Promise<{ code: number; reason: string }>((res) =>
      ws.once('close', (code, reason) => res({ code, reason: reason.toString() })),
    );
    ws.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })),
    );
    ws.once('error', reject);
    ws.once('open', () => {
      const send = (m: unknown) => ws.send(JSON.stringify(m));
      send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
      send({
        event: 'start',
        sequenceNumber: '1',
        start: {
          streamSid,
          accountSid: ACCOUNT_SID,
          callSid: 'CA0001',
          tracks: ['inbound'],
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
          customParameters: { token },
        },
        streamSid,
      });
      resolve({
        ws,
        messages,
        closed,
        heardBytes: () =>
          messages
            .filter((m) => m.event === 'media')
            .reduce((n, m) => n + Buffer.from(m.media.payload, 'base64').length, 0),
        clears: () => messages.filter((m) => m.event === 'clear').length,
        send,
        media: (mulaw) =>
          send({ event: 'media', streamSid, media: { track: 'inbound', payload: mulaw.toString('base64') } }),
      });
    });
  });
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
