/**
 * The phone simulator's engine: N concurrent simulated phone calls to one number of a Parley deployment, each as a
 * carrier places it ({@link CarrierStream}), the caller talking in real time, measured per call and in sum. Used by
 * `npm run phone-sim` and `parley-loadtest --phone`.
 */
import { markerFor } from '../loadtest/marker.js';
import { sleep } from '../../sleep.js';
import { Samples, Tally, type LatencySummary } from '../loadtest/stats.js';
import {
  callParams,
  CarrierStream,
  newCallSid,
  postWebhook,
  readTwiml,
  VOICE_WEBHOOK_PATH,
  type Playback,
} from './carrier.js';

export interface PhoneSimOptions {
  /** Parley's base URL. */
  url: string;
  /** The URL the carrier calls (what it signs): default url + the voice webhook path. Must match PUBLIC_URL. */
  voiceUrl?: string;
  /** The number called (To), registered in Parley. */
  number: string;
  /** The caller (From); default +15550100000 + the call's index. */
  from?: string;
  accountSid: string;
  authToken: string;
  calls: number;
  /** How long each call lasts before the caller hangs up (from the stream's start). */
  durationMs: number;
  /** Spread the calls' starts over this long. */
  rampUpMs: number;
  /** Every caller hangs up `durationMs` after the run's start (a load test's window), not after its own start. */
  sharedEnd?: boolean;
  playback?: Playback;
}

const MU_SILENCE = 0xff;
const FRAME_MS = 20;
const FRAME_BYTES = 160;

/** One call as the caller lived it. */
export interface PhoneCallResult {
  index: number;
  callSid: string;
  /** stream: answered with a media stream; reject: the number is unknown; hangup: refused with a spoken message. */
  answer: 'stream' | 'reject' | 'hangup' | 'error';
  /** What the caller heard said before any stream (the recording notice or a refusal). */
  said: string[];
  sessionId: string | null;
  /** Webhook POST to its TwiML answer, ms. */
  answerMs: number | null;
  /** Dialing (the webhook POST) to the media stream open, ms. */
  connectMs: number | null;
  /** Dialing to the first assistant audio, ms. */
  firstAudioMs: number | null;
  /** Caller frame out -> the same frame back (an echoing assistant), ms. */
  roundTripMs: LatencySummary | null;
  clears: number;
  /** Assistant audio dropped from the phone's queue by clears, ms. */
  clearedMs: number;
  sentMs: number;
  receivedMs: number;
  /** hangup (the caller hung up at the end), the reason Parley closed the stream with, or what went wrong. */
  endReason: string;
  error: string | null;
}

export interface PhoneSimReport {
  tool: 'phone-sim';
  version: 1;
  target: { url: string; voiceUrl: string; number: string };
  plan: { calls: number; durationMs: number; rampUpMs: number; input: string };
  startedAt: string;
  elapsedMs: number;
  interrupted: boolean;
  calls: PhoneCallResult[];
  summary: {
    attempted: number;
    streamed: number;
    rejected: number;
    refused: number;
    failed: number;
    peakConcurrent: number;
    answerMs: LatencySummary | null;
    connectMs: LatencySummary | null;
    firstAudioMs: LatencySummary | null;
    roundTripMs: LatencySummary | null;
    clears: number;
    endReasons: Record<string, number>;
    errors: Record<string, number>;
    sentBytes: number;
    receivedBytes: number;
    /** How late the 20 ms send schedule ran at worst (this machine keeping up), ms. */
    maxSendLagMs: number;
  };
}

export interface PhoneSimHooks {
  signal?: AbortSignal;
  inputLabel: string;
  /** Every second: calls on the line, and streamed so far. */
  onProgress?: (p: { elapsedMs: number; active: number; streamed: number; failed: number }) => void;
}

interface Talking {
  stream: CarrierStream;
  index: number;
  firstFrameAt: number;
  frame: number;
  offset: number;
  sentAt: Map<number, number>;
}

/** Runs the calls (each once, for `durationMs`) and reports. `input` is μ-law 8 kHz, looped. */
export async function runPhoneCalls(
  options: PhoneSimOptions,
  input: Uint8Array,
  hooks: PhoneSimHooks,
): Promise<PhoneSimReport> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const voiceUrl = options.voiceUrl ?? `${options.url.replace(/\/+$/, '')}${VOICE_WEBHOOK_PATH}`;
  const marker = markerFor({ format: 'pcmu', sampleRateHz: 8000 });
  const audio = input.byteLength >= FRAME_BYTES ? input : new Uint8Array(FRAME_BYTES).fill(MU_SILENCE);
  const talking = new Set<Talking>();
  let maxSendLagMs = 0;
  let sentBytes = 0;
  let peak = 0;
  let streamed = 0;
  const results: PhoneCallResult[] = [];
  /** Every echoed frame's round trip, of all calls. */
  const allRoundTrips = new Samples();

  // One timer sends every due 20 ms frame of every call (drift-free per call), as the loadtest's pump does.
  const pump = setInterval(() => {
    const now = performance.now();
    for (const t of talking) {
      for (let due = t.firstFrameAt + t.frame * FRAME_MS; due <= now; due = t.firstFrameAt + t.frame * FRAME_MS) {
        maxSendLagMs = Math.max(maxSendLagMs, now - due);
        if (t.offset + FRAME_BYTES > audio.length) t.offset = 0;
        const frame = audio.slice(t.offset, t.offset + FRAME_BYTES);
        t.offset += FRAME_BYTES;
        marker.stamp(frame, t.index, t.frame);
        t.sentAt.set(t.frame, now);
        if (t.sentAt.size > 2048) t.sentAt.delete(t.frame - 2048);
        t.frame++;
        t.stream.media(frame);
        sentBytes += FRAME_BYTES;
      }
    }
  }, 10);

  async function call(index: number): Promise<PhoneCallResult> {
    await sleep(options.calls <= 1 ? 0 : (options.rampUpMs * index) / (options.calls - 1), hooks.signal);
    const callSid = newCallSid();
    const result: PhoneCallResult = {
      index,
      callSid,
      answer: 'error',
      said: [],
      sessionId: null,
      answerMs: null,
      connectMs: null,
      firstAudioMs: null,
      roundTripMs: null,
      clears: 0,
      clearedMs: 0,
      sentMs: 0,
      receivedMs: 0,
      endReason: 'not placed',
      error: null,
    };
    if (hooks.signal?.aborted) return result;
    const from = options.from ?? `+1555010${String(index % 10_000).padStart(4, '0')}`;
    const dialedAt = performance.now();
    let twiml;
    try {
      const res = await postWebhook(
        voiceUrl,
        callParams(options.accountSid, options.number, from, callSid),
        options.authToken,
      );
      result.answerMs = performance.now() - dialedAt;
      if (res.status !== 200) {
        const code = /"code"\s*:\s*"([A-Z_]+)"/.exec(res.text)?.[1];
        throw new Error(`webhook answered ${res.status}${code !== undefined ? ` ${code}` : ''}`);
      }
      twiml = readTwiml(res.text);
    } catch (err) {
      result.error = (err as Error).message;
      result.endReason = 'webhook failed';
      return result;
    }
    if (twiml.kind !== 'stream') {
      result.answer = twiml.kind === 'unknown' ? 'error' : twiml.kind;
      result.said = twiml.kind === 'hangup' ? twiml.say : [];
      result.endReason = twiml.kind === 'reject' ? 'rejected' : twiml.kind === 'hangup' ? 'refused' : 'no stream';
      return result;
    }
    result.answer = 'stream';
    streamed++;
    result.said = twiml.say;
    result.sessionId = twiml.parameters['sessionId'] ?? null;
    let stream: CarrierStream;
    try {
      stream = await CarrierStream.open({
        url: twiml.url,
        authToken: options.authToken,
        accountSid: options.accountSid,
        callSid,
        parameters: twiml.parameters,
        ...(options.playback !== undefined ? { playback: options.playback } : {}),
      });
    } catch (err) {
      result.error = (err as Error).message;
      result.endReason = 'stream refused';
      return result;
    }
    result.connectMs = performance.now() - dialedAt;
    const me: Talking = { stream, index, firstFrameAt: performance.now(), frame: 0, offset: 0, sentAt: new Map() };
    const roundTrip = new Samples(10_000);
    stream.onMedia = (chunk, at) =>
      marker.find(chunk, (who, seq) => {
        const sent = me.sentAt.get(seq);
        if (who !== index || sent === undefined) return;
        roundTrip.add(at - sent);
        allRoundTrips.add(at - sent);
        me.sentAt.delete(seq);
      });
    talking.add(me);
    peak = Math.max(peak, talking.size);
    const holdMs = options.sharedEnd === true ? started + options.durationMs - performance.now() : options.durationMs;
    const timeUp = sleep(holdMs, hooks.signal).then(() => 'time' as const);
    const over = await Promise.race([stream.closed.then(() => 'closed' as const), timeUp]);
    talking.delete(me);
    if (over === 'time') stream.hangUp();
    const closed = await stream.closed;
    result.endReason = stream.hungUp ? 'hangup' : closed.reason || `closed ${closed.code}`;
    result.firstAudioMs = stream.firstMediaAt === undefined ? null : stream.firstMediaAt - dialedAt;
    result.roundTripMs = roundTrip.summary();
    result.clears = stream.clears;
    result.clearedMs = Math.round(stream.clearedBytes / 8);
    result.sentMs = me.frame * FRAME_MS;
    result.receivedMs = Math.round(stream.receivedBytes / 8);
    return result;
  }

  const tick = setInterval(() => {
    hooks.onProgress?.({
      elapsedMs: performance.now() - started,
      active: talking.size,
      streamed,
      failed: results.filter((r) => r.error !== null).length,
    });
  }, 1000);
  await Promise.all(
    Array.from({ length: options.calls }, (_, i) =>
      call(i).then((r) => {
        results.push(r);
      }),
    ),
  );
  clearInterval(pump);
  clearInterval(tick);
  results.sort((a, b) => a.index - b.index);
  return {
    tool: 'phone-sim',
    version: 1,
    target: { url: options.url, voiceUrl, number: options.number },
    plan: { calls: options.calls, durationMs: options.durationMs, rampUpMs: options.rampUpMs, input: hooks.inputLabel },
    startedAt,
    elapsedMs: Math.round(performance.now() - started),
    interrupted: hooks.signal?.aborted === true,
    calls: results,
    summary: summarize(results, { peak, sentBytes, maxSendLagMs, roundTripMs: allRoundTrips.summary() }),
  };
}

function summarize(
  calls: PhoneCallResult[],
  run: { peak: number; sentBytes: number; maxSendLagMs: number; roundTripMs: LatencySummary | null },
): PhoneSimReport['summary'] {
  const answerMs = new Samples();
  const connectMs = new Samples();
  const firstAudioMs = new Samples();
  const endReasons = new Tally();
  const errors = new Tally();
  let receivedBytes = 0;
  for (const c of calls) {
    if (c.answerMs !== null) answerMs.add(c.answerMs);
    if (c.connectMs !== null) connectMs.add(c.connectMs);
    if (c.firstAudioMs !== null) firstAudioMs.add(c.firstAudioMs);
    endReasons.add(c.endReason);
    if (c.error !== null) errors.add(c.error);
    receivedBytes += c.receivedMs * 8;
  }
  return {
    attempted: calls.length,
    streamed: calls.filter((c) => c.answer === 'stream').length,
    rejected: calls.filter((c) => c.answer === 'reject').length,
    refused: calls.filter((c) => c.answer === 'hangup').length,
    failed: calls.filter((c) => c.error !== null).length,
    peakConcurrent: run.peak,
    answerMs: answerMs.summary(),
    connectMs: connectMs.summary(),
    firstAudioMs: firstAudioMs.summary(),
    roundTripMs: run.roundTripMs,
    clears: calls.reduce((n, c) => n + c.clears, 0),
    endReasons: endReasons.counts,
    errors: errors.counts,
    sentBytes: run.sentBytes,
    receivedBytes,
    maxSendLagMs: Math.round(run.maxSendLagMs),
  };
}
