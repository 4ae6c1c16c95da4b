/**
 * A simulated carrier's REST side (Twilio's 2010-04-01 Calls resource) and the people or machines it calls, so that
 * calls Parley places run offline: point Parley's TWILIO_API_BASE_URL at {@link SimulatedCarrier.url}. It places a
 * call (Basic auth with the account's SID and token), reports its progress to the call's StatusCallback (signed like
 * every carrier request), and on an answer fetches the call's TwiML and opens the signed media stream with the
 * {@link CarrierStream} of the inbound simulator. The callee answers as a person (speaks, listens, hangs up), as an
 * answering machine (a greeting and a beep, then the asynchronous AnsweredBy verdict; it records what is said after
 * the beep), or not at all (busy, no answer). A live call can be hung up or redirected to new TwiML. Node-only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { linearToMulaw } from '../../voice/formats.js';
import { CarrierStream, newCallSid, postWebhook, readTwiml } from './carrier.js';

/** Who picks up a number. */
export type Callee =
  | {
      kind: 'person';
      /** 20 ms frames of speech said once the call connects (default 40). */
      speechFrames?: number;
      /** How long the person stays on the line after hearing the assistant (default: hangs up at once). */
      holdMs?: number;
    }
  | { kind: 'machine'; /** 20 ms frames of greeting before the beep (default 25). */ greetingFrames?: number }
  | { kind: 'busy' }
  | { kind: 'no-answer'; /** How long it rings first (default at once): a call to cancel meanwhile. */ ringMs?: number }
  /** The carrier refuses to place it (an invalid number): 400 from the create request. */
  | { kind: 'invalid' };

export interface SimulatedCall {
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  callee: Callee['kind'];
  /** The CallStatus values reported to Parley, in order. */
  statuses: string[];
  /** The AnsweredBy verdict sent (machine detection asked for). */
  answeredBy: string | undefined;
  /** What a machine recorded after its beep (the Say of a redirect). */
  voicemail: string | undefined;
  /** Where Parley redirected the live call to (a <Dial> of a cold transfer). */
  transferredTo: string | undefined;
  /** Assistant audio the callee received (bytes of μ-law). */
  heardBytes: number;
  /** Who ended it: the callee hung up, or Parley did (hang-up or redirect), or it was never answered. */
  endedBy: 'callee' | 'parley' | 'unanswered' | undefined;
  /** Settles once the final status was reported. */
  done: Promise<void>;
}

export interface SimulatedCarrierOptions {
  /** AccountSid -> auth token: what authenticates a REST request and signs every callback. */
  accounts: Record<string, string>;
  /** Who answers a number (default: a person). */
  callee?: (to: string) => Callee;
  /** The 20 ms μ-law frame a person or a greeting says (default: a speech-level square wave). */
  speechFrame?: Uint8Array;
  /** How long a person waits for the assistant's answer before hanging up anyway (default 10 s). */
  listenMs?: number;
  /**
   * Where a callback is sent (it is signed over the URL Parley gave): a load balancer in front of several instances.
   * Default: the URL itself.
   */
  route?: (url: string) => string;
  /** Port on 127.0.0.1 (default 0: any free one). */
  port?: number;
  /** Each call once its final status was reported. */
  onEnded?: (call: SimulatedCall) => void;
}

interface LiveCall {
  call: SimulatedCall;
  form: URLSearchParams;
  token: string;
  stream: CarrierStream | undefined;
  /** The callee hung up (its stream's close is not Parley's doing). */
  calleeLeft: boolean;
  /** Parley asked for the call to end (or be redirected): the callee's script stops. */
  ended: AbortController;
  finish: () => void;
}

const SPEECH = (() => {
  const frame = new Uint8Array(160);
  // A square wave at speech level (±8000): what the voice simulator hears as speech.
  for (let i = 0; i < 160; i++) frame[i] = linearToMulaw(i % 14 < 7 ? 8000 : -8000);
  return frame;
})();
const SILENCE = new Uint8Array(160).fill(linearToMulaw(0));

export class SimulatedCarrier {
  readonly calls = new Map<string, SimulatedCall>();
  /** The most calls ringing or on the line at once. */
  maxLive = 0;
  private readonly live = new Map<string, LiveCall>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: SimulatedCarrierOptions,
  ) {}

  static async start(options: SimulatedCarrierOptions): Promise<SimulatedCarrier> {
    let carrier: SimulatedCarrier | undefined;
    const server = createServer((req, res) => void carrier!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    carrier = new SimulatedCarrier(server, `http://127.0.0.1:${port}`, options);
    return carrier;
  }

  /** Stops listening and hangs up every call still on the line. */
  async close(): Promise<void> {
    for (const live of this.live.values()) {
      live.ended.abort();
      live.stream?.ws.terminate();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const path = /^\/2010-04-01\/Accounts\/(AC[0-9a-fA-F]{32})\/Calls(?:\/(CA[0-9a-f]{32}))?\.json$/.exec(
      req.url ?? '',
    );
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || path === null) return send(404, { code: 20404, message: 'Not found' });
    const accountSid = path[1]!;
    const token = this.options.accounts[accountSid];
    const [user, pass] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString('utf8')
      .split(':');
    if (token === undefined || user !== accountSid || pass !== token)
      return send(401, { code: 20003, message: 'Authenticate' });
    if (path[2] === undefined) return this.create(accountSid, token, form, send);
    const live = this.live.get(path[2]);
    const call = this.calls.get(path[2]);
    if (call === undefined) return send(404, { code: 20404, message: 'The requested resource was not found' });
    if (live === undefined) return send(200, { sid: call.sid, status: call.statuses.at(-1) ?? 'completed' });
    const twiml = form.get('Twiml');
    if (twiml !== null) {
      const answer = readTwiml(twiml);
      if (answer.kind === 'hangup' && answer.say.length > 0) call.voicemail = answer.say.join(' ');
      // A cold transfer: the stream ends and the carrier dials the number (the person there is not simulated).
      const dial = /<Dial\b[^>]*>\s*(?:<Number>)?\s*([^<\s]+)/.exec(twiml);
      if (dial !== null) call.transferredTo = dial[1];
      this.endByParley(live, 'completed');
    } else if (form.get('Status') === 'completed' || form.get('Status') === 'canceled') {
      this.endByParley(live, live.stream === undefined ? 'canceled' : 'completed');
    }
    send(200, { sid: call.sid, status: call.statuses.at(-1) ?? 'queued' });
  }

  private create(
    accountSid: string,
    token: string,
    form: URLSearchParams,
    send: (status: number, body: unknown) => void,
  ): void {
    const to = form.get('To') ?? '';
    const callee = this.options.callee?.(to) ?? { kind: 'person' };
    if (callee.kind === 'invalid' || !/^\+[1-9][0-9]{6,14}$/.test(to))
      return send(400, { code: 21211, message: `The 'To' number ${to} is not a valid phone number.` });
    const sid = newCallSid();
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const call: SimulatedCall = {
      sid,
      accountSid,
      to,
      from: form.get('From') ?? '',
      callee: callee.kind,
      statuses: [],
      answeredBy: undefined,
      voicemail: undefined,
      transferredTo: undefined,
      heardBytes: 0,
      endedBy: undefined,
      done,
    };
    this.calls.set(sid, call);
    const live: LiveCall = {
      call,
      form,
      token,
      stream: undefined,
      calleeLeft: false,
      ended: new AbortController(),
      finish,
    };
    this.live.set(sid, live);
    this.maxLive = Math.max(this.maxLive, this.live.size);
    send(201, { sid, account_sid: accountSid, to, from: call.from, status: 'queued' });
    void this.run(live, callee).catch(() => this.final(live, 'failed', 'parley'));
  }

  /** The call's life, as its callee lives it. */
  private async run(live: LiveCall, callee: Callee): Promise<void> {
    await this.status(live, 'initiated');
    await this.status(live, 'ringing');
    if (live.ended.signal.aborted) return;
    if (callee.kind === 'busy') return this.final(live, 'busy', 'unanswered');
    if (callee.kind === 'no-answer' || callee.kind === 'invalid') {
      await this.until(live, () => false, callee.kind === 'no-answer' ? (callee.ringMs ?? 0) : 0);
      return this.final(live, 'no-answer', 'unanswered');
    }
    const answerUrl = live.form.get('Url') ?? '';
    const answer = await this.post(answerUrl, this.params(live, 'in-progress'), live.token);
    const twiml = answer.status === 200 ? readTwiml(answer.text) : ({ kind: 'unknown' } as const);
    if (twiml.kind !== 'stream') return this.final(live, 'completed', 'parley');
    if (live.ended.signal.aborted) return;
    const stream = await CarrierStream.open({
      url: twiml.url,
      authToken: live.token,
      accountSid: live.call.accountSid,
      callSid: live.call.sid,
      parameters: twiml.parameters,
      playback: 'instant',
    });
    live.stream = stream;
    stream.onMedia = (audio) => void (live.call.heardBytes += audio.length);
    void stream.closed.then(() => {
      // The stream closed under the callee (Parley ended the call): the carrier hangs up.
      if (!live.calleeLeft && !live.ended.signal.aborted) this.endByParley(live, 'completed');
    });
    await this.status(live, 'in-progress');
    const frame = this.options.speechFrame ?? SPEECH;
    if (callee.kind === 'person') {
      for (let i = 0; i < (callee.speechFrames ?? 40); i++) stream.media(frame);
      for (let i = 0; i < 40; i++) stream.media(SILENCE);
      await this.until(live, () => live.call.heardBytes > 0, this.options.listenMs ?? 10_000);
      if (callee.holdMs !== undefined) await this.until(live, () => false, callee.holdMs);
      if (live.ended.signal.aborted) return;
      live.calleeLeft = true;
      stream.hangUp();
      await stream.closed;
      return this.final(live, 'completed', 'callee');
    }
    // A machine: its greeting, the beep, then the carrier's verdict (asynchronous detection asked for).
    for (let i = 0; i < (callee.greetingFrames ?? 25); i++) stream.media(frame);
    for (let i = 0; i < 25; i++) stream.media(SILENCE);
    const amdUrl = live.form.get('AsyncAmdStatusCallback');
    if (amdUrl !== null) {
      live.call.answeredBy = 'machine_end_beep';
      await this.post(
        amdUrl,
        { ...this.params(live, 'in-progress'), AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '1800' },
        live.token,
      );
    }
    // The machine records until Parley hangs up or redirects, or its own limit passes.
    await this.until(live, () => false, this.options.listenMs ?? 10_000);
    if (live.ended.signal.aborted) return;
    live.calleeLeft = true;
    stream.hangUp();
    await stream.closed;
    return this.final(live, 'completed', 'callee');
  }

  /** Parley hung up or redirected: the stream ends (stop, then closed) and the call is over. */
  private endByParley(live: LiveCall, status: 'completed' | 'canceled'): void {
    if (live.ended.signal.aborted) return;
    live.ended.abort();
    const stream = live.stream;
    if (stream !== undefined && stream.open) {
      stream.send({ event: 'stop', streamSid: stream.streamSid, stop: { accountSid: live.call.accountSid } });
      stream.ws.close(1000, 'stop');
    }
    void this.final(live, status, 'parley', true);
  }

  private async final(live: LiveCall, status: string, by: SimulatedCall['endedBy'], force = false): Promise<void> {
    if (!this.live.has(live.call.sid)) return;
    if (!force && live.ended.signal.aborted && by !== 'unanswered') return;
    this.live.delete(live.call.sid);
    live.call.endedBy = by;
    live.ended.abort();
    try {
      await this.status(live, status);
    } finally {
      live.finish();
      this.options.onEnded?.(live.call);
    }
  }

  private params(live: LiveCall, status: string): Record<string, string> {
    return {
      AccountSid: live.call.accountSid,
      ApiVersion: '2010-04-01',
      CallSid: live.call.sid,
      CallStatus: status,
      Direction: 'outbound-api',
      From: live.call.from,
      To: live.call.to,
      ...(live.call.answeredBy !== undefined ? { AnsweredBy: live.call.answeredBy } : {}),
    };
  }

  private async status(live: LiveCall, status: string): Promise<void> {
    live.call.statuses.push(status);
    const url = live.form.get('StatusCallback');
    if (url === null) return;
    await this.post(url, this.params(live, status), live.token).catch(() => undefined);
  }

  private post(url: string, params: Record<string, string>, token: string) {
    const sendTo = this.options.route?.(url);
    return postWebhook(url, params, token, sendTo === undefined ? {} : { sendTo });
  }

  /** Resolves once `ready()` holds, the call was ended by Parley, or `ms` passed. */
  private async until(live: LiveCall, ready: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ready() && !live.ended.signal.aborted && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
