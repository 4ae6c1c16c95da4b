/**
 * A simulated carrier: what Twilio (or Telnyx, which speaks the same messages) does when someone calls a number whose
 * voice webhook points at Parley. It POSTs the signed call webhook, reads the TwiML answer, opens the signed media
 * stream, says `connected` and `start` (with the stream's `<Parameter>`s as customParameters), sends the caller's
 * audio as 20 ms base64 μ-law `media` frames and "plays" what comes back: at real-time pace, each `mark` echoed once
 * the audio before it was played, `clear` dropping what was still queued (and returning its marks, as the carrier
 * does). Node-only (node:crypto, ws). Used by `npm run phone-sim`, `parley-loadtest --phone` and Parley's own tests.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';

/** Where a Twilio number's voice webhook points on a Parley deployment ({PUBLIC_URL} + this). */
export const VOICE_WEBHOOK_PATH = '/api/v1/telephony/twilio/voice';

/** The carrier account whose number is called: its SID goes in every request, its token signs them. */
export interface CarrierAccount {
  accountSid: string;
  authToken: string;
}

/**
 * The carrier's request signature: base64 HMAC-SHA1 with the account's auth token over the URL it called followed by
 * each POST parameter's name and value, sorted by name (no parameters for a stream's upgrade).
 */
export function carrierSignature(authToken: string, url: string, params: Record<string, string> = {}): string {
  let data = url;
  for (const name of Object.keys(params).sort()) data += name + params[name];
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** A CallSid-like id (CA + 32 hex digits). */
export const newCallSid = (): string => `CA${randomBytes(16).toString('hex')}`;

/** The parameters of an inbound call's webhook, as the carrier sends them. */
export function callParams(
  accountSid: string,
  to: string,
  from: string,
  callSid = newCallSid(),
): Record<string, string> {
  return {
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    CallSid: callSid,
    CallStatus: 'ringing',
    Direction: 'inbound',
    From: from,
    To: to,
  };
}

/** POSTs the call webhook as the carrier does: form-encoded, signed (unless `signature` is given; null: none). */
export async function postWebhook(
  voiceUrl: string,
  params: Record<string, string>,
  authToken: string,
  options: { signature?: string | null; signal?: AbortSignal; sendTo?: string } = {},
): Promise<{ status: number; text: string }> {
  const signature = options.signature === undefined ? carrierSignature(authToken, voiceUrl, params) : options.signature;
  // Signed over the public URL, sent to `sendTo` when given (a load balancer's instance behind that URL).
  const res = await fetch(options.sendTo ?? voiceUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(signature === null ? {} : { 'x-twilio-signature': signature }),
    },
    body: new URLSearchParams(params).toString(),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  return { status: res.status, text: await res.text() };
}

const unescapeXml = (s: string) =>
  s.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) =>
    e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : e === 'apos' ? "'" : '&',
  );

/** What the TwiML answer tells the carrier to do. */
export type TwimlAnswer =
  | { kind: 'stream'; url: string; parameters: Record<string, string>; say: string[] }
  | { kind: 'reject' }
  | { kind: 'hangup'; say: string[] }
  | { kind: 'unknown' };

/** Reads a TwiML answer (the verbs Parley uses: Say, Connect/Stream/Parameter, Reject, Hangup). */
export function readTwiml(twiml: string): TwimlAnswer {
  const say = [...twiml.matchAll(/<Say[^>]*>([^<]*)<\/Say>/g)].map((m) => unescapeXml(m[1]!));
  const stream = /<Stream\s+url="([^"]+)"[^>]*>([\s\S]*?)<\/Stream>/.exec(twiml);
  if (stream !== null) {
    const parameters: Record<string, string> = {};
    for (const p of stream[2]!.matchAll(/<Parameter\s+name="([^"]*)"\s+value="([^"]*)"\s*\/>/g))
      parameters[unescapeXml(p[1]!)] = unescapeXml(p[2]!);
    return { kind: 'stream', url: unescapeXml(stream[1]!), parameters, say };
  }
  if (/<Reject\b/.test(twiml)) return { kind: 'reject' };
  if (/<Hangup\b/.test(twiml)) return { kind: 'hangup', say };
  return { kind: 'unknown' };
}

/** How the simulated phone plays assistant audio, which decides when `mark`s go back. */
export type Playback = 'realtime' | 'instant' | 'never';

export interface CarrierStreamOptions {
  /** The stream URL of the TwiML answer (wss under Parley's PUBLIC_URL). */
  url: string;
  /** The number's account token: signs the upgrade (over the URL, no parameters). */
  authToken: string;
  accountSid: string;
  callSid?: string;
  /** The stream's `<Parameter>`s: sent back in `start` as customParameters. */
  parameters: Record<string, string>;
  /** Override the upgrade's signature (a test of a wrong one). */
  signature?: string;
  /** Default realtime: a mark goes back once the audio sent before it has been played at 8000 samples a second. */
  playback?: Playback;
  /** Keep every message received in `messages` (tests). */
  keepMessages?: boolean;
}

/** 8 bytes of μ-law are a millisecond. */
const BYTES_PER_MS = 8;

/**
 * One carrier media stream, open. `start` has been sent when {@link CarrierStream.open} resolves. Counts what a
 * phone would notice: audio received and played, clears and what they dropped, when the first audio came.
 */
export class CarrierStream {
  readonly streamSid = `MZ${randomBytes(16).toString('hex')}`;
  readonly messages: any[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  /** performance.now() of the first assistant audio, of the first clear. */
  firstMediaAt: number | undefined;
  receivedBytes = 0;
  clears = 0;
  /** Assistant audio a clear dropped before it was played (bytes of μ-law). */
  clearedBytes = 0;
  marksEchoed = 0;
  /** Every assistant `media` payload as it arrives (decoded μ-law) and every clear. */
  onMedia: ((audio: Buffer, at: number) => void) | undefined;
  onClear: ((at: number) => void) | undefined;
  /** We said `stop` (the caller hung up) before the socket closed. */
  hungUp = false;
  private playEndAt = 0;
  private readonly pendingMarks: { name: string; at: number }[] = [];
  private markTimer: NodeJS.Timeout | undefined;
  private readonly playback: Playback;

  private constructor(
    readonly ws: WebSocket,
    private readonly options: CarrierStreamOptions,
  ) {
    this.playback = options.playback ?? 'realtime';
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        if (this.markTimer !== undefined) clearTimeout(this.markTimer);
        resolve({ code, reason: reason.toString() });
      }),
    );
    ws.on('message', (data: Buffer) => this.onMessage(data));
  }

  /** Opens the signed stream and says `connected` and `start`; rejects with `status` when the upgrade is refused. */
  static open(options: CarrierStreamOptions): Promise<CarrierStream> {
    const signature = options.signature ?? carrierSignature(options.authToken, options.url);
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(options.url, { headers: { 'x-twilio-signature': signature }, perMessageDeflate: false });
      const stream = new CarrierStream(ws, options);
      ws.once('unexpected-response', (_req, res) =>
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })),
      );
      ws.once('error', reject);
      ws.once('open', () => {
        ws.off('error', reject);
        ws.on('error', () => undefined); // a reset after open shows as the close
        stream.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
        stream.send({
          event: 'start',
          sequenceNumber: '1',
          start: {
            streamSid: stream.streamSid,
            accountSid: options.accountSid,
            callSid: options.callSid ?? newCallSid(),
            tracks: ['inbound'],
            mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
            customParameters: options.parameters,
          },
          streamSid: stream.streamSid,
        });
        resolve(stream);
      });
    });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(message: unknown): void {
    if (this.open) this.ws.send(JSON.stringify(message));
  }

  /** One frame of the caller's voice (μ-law). */
  media(mulaw: Uint8Array): void {
    if (!this.open) return;
    const payload = Buffer.from(mulaw.buffer, mulaw.byteOffset, mulaw.byteLength).toString('base64');
    this.ws.send(
      `{"event":"media","streamSid":"${this.streamSid}","media":{"track":"inbound","payload":"${payload}"}}`,
    );
  }

  dtmf(digit: string): void {
    this.send({ event: 'dtmf', streamSid: this.streamSid, dtmf: { track: 'inbound_track', digit } });
  }

  /** The caller hangs up: `stop`, then the carrier closes the socket (Parley usually closes it first). */
  hangUp(): void {
    if (!this.open) return;
    this.hungUp = true;
    this.send({ event: 'stop', streamSid: this.streamSid, stop: { accountSid: this.options.accountSid } });
    const timer = setTimeout(() => this.ws.close(1000, 'stop'), 2000);
    timer.unref();
    void this.closed.then(() => clearTimeout(timer));
  }

  /** Assistant audio received but not yet played (ms), at real-time pace. */
  queuedMs(now = performance.now()): number {
    return Math.max(0, this.playEndAt - now);
  }

  private onMessage(data: Buffer): void {
    let message: any;
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      return;
    }
    if (this.options.keepMessages === true) this.messages.push(message);
    const now = performance.now();
    switch (message?.event) {
      case 'media': {
        const audio = Buffer.from(String(message.media?.payload ?? ''), 'base64');
        this.receivedBytes += audio.length;
        this.firstMediaAt ??= now;
        this.playEndAt = Math.max(now, this.playEndAt) + audio.length / BYTES_PER_MS;
        this.onMedia?.(audio, now);
        return;
      }
      case 'mark': {
        const name = String(message.mark?.name ?? '');
        if (this.playback === 'never') return;
        if (this.playback === 'instant') return this.echoMark(name);
        this.pendingMarks.push({ name, at: Math.max(now, this.playEndAt) });
        this.scheduleMarks();
        return;
      }
      case 'clear': {
        // The phone drops what it had queued and returns the marks of the dropped audio at once.
        this.clears++;
        this.clearedBytes += Math.round(this.queuedMs(now) * BYTES_PER_MS);
        this.playEndAt = now;
        for (const mark of this.pendingMarks.splice(0)) this.echoMark(mark.name);
        this.onClear?.(now);
        return;
      }
    }
  }

  private echoMark(name: string): void {
    this.marksEchoed++;
    this.send({ event: 'mark', streamSid: this.streamSid, mark: { name } });
  }

  private scheduleMarks(): void {
    if (this.markTimer !== undefined) return;
    const next = this.pendingMarks[0];
    if (next === undefined) return;
    this.markTimer = setTimeout(
      () => {
        this.markTimer = undefined;
        const now = performance.now();
        while (this.pendingMarks.length > 0 && this.pendingMarks[0]!.at <= now + 1)
          this.echoMark(this.pendingMarks.shift()!.name);
        this.scheduleMarks();
      },
      Math.max(0, next.at - performance.now()),
    );
  }
}
