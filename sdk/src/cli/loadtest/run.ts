/**
 * The load-test engine: N voice callers (each a VoiceCall streaming real-time audio in the chosen format) and M chat loops against one
 * Parley deployment, measured. Node-only (it takes a WebSocket implementation; the CLI passes `ws`).
 */
import { setMaxListeners } from 'node:events';
import { createParleyClient, type ParleyClient } from '../../client.js';
import { ParleyError } from '../../errors.js';
import { streamChat } from '../../chat.js';
import { VoiceCall } from '../../voice/call.js';
import { bytesPerMsOf, DEFAULT_AUDIO, type AudioFormat } from '../../voice/formats.js';
import { FRAME_MS } from '../../voice/pcm.js';
import type { WebSocketConstructor } from '../../voice/types.js';
import type { LoadTestOptions } from './args.js';
import { markerFor } from './marker.js';
import { NO_ROUTE_KEY } from './labels.js';
import type { LoadTestReport, Progress } from './report.js';
import { serverFigures, SERVER_FIGURE_CALLS } from './server-side.js';
import { Samples, Tally } from './stats.js';
import { sleep } from '../../sleep.js';

export type { LoadTestReport, Progress } from './report.js';

export interface RunHooks {
  WebSocket: WebSocketConstructor;
  /** Stops the test early; the calls are ended and the report still made. */
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /** Label of the input for the report. */
  inputLabel: string;
  /** The assistant was created for this run. */
  temporaryAssistant?: boolean;
}

interface Active {
  call: VoiceCall;
  caller: number;
  /** When its first frame was due (performance.now()). */
  firstFrameAt: number;
  frame: number;
  offset: number;
  /** Send times of recent frames by seq (a ring), for the round trip. */
  sentAt: Float64Array;
  sentSeq: Int32Array;
}

const RING = 2048;

function refusalKey(err: ParleyError): string {
  return `${err.status} ${err.reason ?? err.code}`;
}

function errorKey(err: unknown): string {
  if (err instanceof ParleyError) return err.status === 0 ? err.code : `${err.status} ${err.reason ?? err.code}`;
  return err instanceof Error ? err.message.slice(0, 120) : String(err).slice(0, 120);
}

/** Runs the test to the end (or until the signal aborts) and reports. */
export async function runLoadTest(
  options: LoadTestOptions & { assistantId: string },
  input: Uint8Array,
  hooks: RunHooks,
): Promise<LoadTestReport> {
  const runId = Math.random().toString(36).slice(2, 8);
  const started = performance.now();
  const startedAt = new Date();
  const stop = new AbortController();
  // Every caller and chat loop waits on this one signal at once (hundreds of listeners by design).
  setMaxListeners(0, stop.signal);
  const endTimer = setTimeout(() => stop.abort(), options.durationMs);
  const onAbort = () => stop.abort();
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  if (hooks.signal?.aborted) stop.abort();

  const headers: Record<string, string> = options.origin !== undefined ? { origin: options.origin } : {};
  const client: ParleyClient = createParleyClient({
    baseUrl: options.url,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    headers,
    onDeprecation: () => undefined,
  });

  const mintMs = new Samples();
  const connectMs = new Samples();
  const firstAudioMs = new Samples();
  const roundTrip = new Samples();
  let secondRoundTrip = new Samples(10_000);
  const refusals = new Tally();
  const endReasons = new Tally();
  const perInstance = new Tally();
  const errors = new Tally();
  const sessionIds: string[] = [];
  const audio = {
    sentBytes: 0,
    receivedBytes: 0,
    droppedLocallyBytes: 0,
    droppedByServerMs: 0,
    receivedWhileGateClosedBytes: 0,
    maxSendLagMs: 0,
  };
  const heartbeats = { sent: 0, failed: 0 };
  let attempted = 0;
  let connected = 0;
  let ended = 0;
  let peak = 0;
  let echoDetected = false;
  const active = new Set<Active>();

  const callAudio = options.audio ?? DEFAULT_AUDIO;
  const FRAME_BYTES = FRAME_MS * bytesPerMsOf(callAudio);
  const marker = markerFor(callAudio);
  // ---- the pump: one timer sends every due 20 ms frame of every active call (drift-free per call) -------------
  const pump = setInterval(() => {
    const now = performance.now();
    for (const a of active) {
      for (let due = a.firstFrameAt + a.frame * FRAME_MS; due <= now; due = a.firstFrameAt + a.frame * FRAME_MS) {
        const lag = now - due;
        if (lag > audio.maxSendLagMs) audio.maxSendLagMs = lag;
        if (a.offset + FRAME_BYTES > input.length) a.offset = 0;
        const frame = input.slice(a.offset, a.offset + FRAME_BYTES);
        a.offset += FRAME_BYTES;
        marker.stamp(frame, a.caller, a.frame);
        a.sentAt[a.frame % RING] = now;
        a.sentSeq[a.frame % RING] = a.frame;
        a.frame++;
        if (a.call.sendAudio(frame)) audio.sentBytes += FRAME_BYTES;
      }
    }
  }, 10);

  // ---- one voice caller: dial, talk until its call length or the end, hang up, dial again -------------------------
  async function caller(index: number): Promise<void> {
    await sleep(options.calls <= 1 ? 0 : (options.rampUpMs * index) / (options.calls - 1), stop.signal);
    for (let n = 0; !stop.signal.aborted; n++) {
      attempted++;
      let visitorId = `loadtest-${runId}-${index}-${n}`;
      let signature: string | undefined;
      if (options.sign) {
        try {
          // Parley signs only visitor ids it makes up itself: a new visitor per call.
          const signed = await client.POST('/api/v1/widget/sign', { body: { assistantId: options.assistantId } });
          visitorId = signed.visitorId;
          signature = signed.signature;
        } catch (err) {
          if (err instanceof ParleyError && err.status > 0) refusals.add(`sign ${refusalKey(err)}`);
          else errors.add(`sign: ${errorKey(err)}`);
          await sleep(1000, stop.signal);
          continue;
        }
      }
      const call = new VoiceCall({
        baseUrl: options.url,
        assistantId: options.assistantId,
        WebSocket: hooks.WebSocket,
        headers,
        ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : { visitorId }),
        ...(signature !== undefined ? { signature } : {}),
        ...(options.recordingConsent ? { recordingConsent: true } : {}),
        ...(options.audio !== undefined && !isDefaultAudio(options.audio) ? { audio: options.audio } : {}),
      });
      const me: Active = {
        call,
        caller: index,
        firstFrameAt: 0,
        frame: 0,
        offset: 0,
        sentAt: new Float64Array(RING),
        sentSeq: new Int32Array(RING).fill(-1),
      };
      call.on('audio', (pcm) => {
        audio.receivedBytes += pcm.byteLength;
        const at = performance.now();
        marker.find(pcm, (who, seq) => {
          if (who !== index || me.sentSeq[seq % RING] !== seq) return;
          echoDetected = true;
          const rtt = at - me.sentAt[seq % RING]!;
          roundTrip.add(rtt);
          secondRoundTrip.add(rtt);
          me.sentSeq[seq % RING] = -1; // count each frame once
        });
      });
      call.on('error', (err) => {
        if (call.session !== undefined) errors.add(errorKey(err));
      });
      try {
        await call.start();
      } catch (err) {
        if (err instanceof ParleyError && err.status > 0) refusals.add(refusalKey(err));
        else errors.add(errorKey(err));
        await sleep(1000, stop.signal);
        continue;
      }
      connected++;
      if (call.session !== undefined && sessionIds.length < SERVER_FIGURE_CALLS)
        sessionIds.push(call.session.sessionId);
      perInstance.add(/^vs_([a-z0-9]+)_/.exec(call.session?.sessionId ?? '')?.[1] ?? NO_ROUTE_KEY);
      if (call.stats.mintMs !== undefined) mintMs.add(call.stats.mintMs);
      if (call.stats.connectMs !== undefined) connectMs.add(call.stats.connectMs);
      me.firstFrameAt = performance.now();
      active.add(me);
      peak = Math.max(peak, active.size);
      const over = new Promise<void>((resolve) => call.on('ended', () => resolve()));
      const hangUpAfter = options.callMs ?? Number.POSITIVE_INFINITY;
      await Promise.race([over, sleep(Math.min(hangUpAfter, 2 ** 31 - 1), stop.signal)]);
      active.delete(me);
      await call.end().catch(() => undefined);
      ended++;
      endReasons.add(call.endReason === null || call.endReason === undefined ? 'client' : call.endReason);
      if (call.stats.firstAudioMs !== undefined) firstAudioMs.add(call.stats.firstAudioMs);
      audio.droppedLocallyBytes += call.stats.bytesDroppedLocally;
      audio.droppedByServerMs += call.stats.assistantDroppedMs;
      audio.receivedWhileGateClosedBytes += call.stats.assistantBytesMuted;
      heartbeats.sent += call.stats.heartbeats;
      heartbeats.failed += call.stats.heartbeatFailures;
      if (call.endReason !== null && call.endReason !== undefined && !stop.signal.aborted)
        await sleep(1000, stop.signal);
    }
  }

  // ---- one chat loop: ask, read the streamed answer, ask again ----------------------------------------------------
  const chatStats = {
    attempted: 0,
    answered: 0,
    latency: new Samples(),
    firstToken: new Samples(),
    refusals: new Tally(),
    errors: new Tally(),
  };
  async function chatLoop(index: number): Promise<void> {
    await sleep(options.chats <= 1 ? 0 : (options.rampUpMs * index) / (options.chats - 1), stop.signal);
    while (!stop.signal.aborted) {
      chatStats.attempted++;
      const t0 = performance.now();
      let first: number | undefined;
      try {
        for await (const event of streamChat(
          client,
          {
            assistantId: options.assistantId,
            message: options.chatMessage,
            ...(options.apiKey === undefined ? { visitorId: `loadtest-${runId}-chat-${index}` } : {}),
          },
          { signal: stop.signal },
        )) {
          if (event.type === 'token' && first === undefined) first = performance.now() - t0;
          if (event.type === 'error') chatStats.errors.add(`stream ${event.code}`);
        }
        chatStats.answered++;
        chatStats.latency.add(performance.now() - t0);
        if (first !== undefined) chatStats.firstToken.add(first);
      } catch (err) {
        if (stop.signal.aborted) break;
        if (err instanceof ParleyError && err.status > 0) chatStats.refusals.add(refusalKey(err));
        else chatStats.errors.add(errorKey(err));
        await sleep(
          err instanceof ParleyError && err.retryAfterMs !== undefined ? Math.min(err.retryAfterMs, 10_000) : 1000,
          stop.signal,
        );
      }
    }
  }

  // ---- progress and timeline ------------------------------------------------------------------------------------
  const timeline: LoadTestReport['timeline'] = [];
  const tick = setInterval(() => {
    const elapsedMs = performance.now() - started;
    const p50 = secondRoundTrip.percentile(50);
    secondRoundTrip = new Samples(10_000);
    timeline.push({
      t: Math.round(elapsedMs / 1000),
      activeCalls: active.size,
      refusals: refusals.total,
      errors: errors.total,
      roundTripP50: p50 === undefined ? null : Math.round(p50 * 10) / 10,
    });
    hooks.onProgress?.({
      elapsedMs,
      totalMs: options.durationMs,
      activeCalls: active.size,
      connected,
      refusals: refusals.total + chatStats.refusals.total,
      errors: errors.total + chatStats.errors.total,
      roundTripP50: roundTrip.percentile(50),
      chatsAnswered: chatStats.answered,
    });
  }, 1000);

  const workers = [
    ...Array.from({ length: options.calls }, (_, i) => caller(i)),
    ...Array.from({ length: options.chats }, (_, i) => chatLoop(i)),
  ];
  await Promise.all(workers.map((w) => w.catch((err: unknown) => errors.add(`internal: ${errorKey(err)}`))));
  clearTimeout(endTimer);
  clearInterval(pump);
  clearInterval(tick);
  hooks.signal?.removeEventListener('abort', onAbort);
  // With a key, the service's own figures for the same calls (their timelines): keyless callers cannot read them.
  const server = options.apiKey !== undefined && sessionIds.length > 0 ? await serverFigures(client, sessionIds) : null;

  const elapsedMs = performance.now() - started;
  return {
    tool: 'parley-loadtest',
    version: 1,
    target: {
      url: options.url,
      assistantId: options.assistantId,
      auth: options.apiKey !== undefined ? 'api-key' : 'keyless',
      temporaryAssistant: hooks.temporaryAssistant === true,
    },
    plan: {
      calls: options.calls,
      chats: options.chats,
      rampUpMs: options.rampUpMs,
      durationMs: options.durationMs,
      callMs: options.callMs ?? null,
      input: hooks.inputLabel,
    },
    startedAt: startedAt.toISOString(),
    endedAt: new Date().toISOString(),
    elapsedMs: Math.round(elapsedMs),
    interrupted: hooks.signal?.aborted === true,
    voice: {
      attempted,
      connected,
      ended,
      peakConcurrent: peak,
      mintMs: mintMs.summary(),
      connectMs: connectMs.summary(),
      firstAudioMs: firstAudioMs.summary(),
      roundTripMs: roundTrip.summary(),
      echoDetected,
      refusals: refusals.counts,
      endReasons: endReasons.counts,
      perInstance: perInstance.counts,
      errors: errors.counts,
      audio: { ...audio, maxSendLagMs: Math.round(audio.maxSendLagMs) },
      heartbeats,
      server,
    },
    chat:
      options.chats === 0
        ? null
        : {
            attempted: chatStats.attempted,
            answered: chatStats.answered,
            latencyMs: chatStats.latency.summary(),
            firstTokenMs: chatStats.firstToken.summary(),
            refusals: chatStats.refusals.counts,
            errors: chatStats.errors.counts,
          },
    timeline,
  };
}

/** Caller audio per second of a call in this format (bytes). */
export function callerBytesPerSecond(audio: AudioFormat = DEFAULT_AUDIO): number {
  return bytesPerMsOf(audio) * 1000;
}

function isDefaultAudio(audio: AudioFormat): boolean {
  return audio.format === DEFAULT_AUDIO.format && audio.sampleRateHz === DEFAULT_AUDIO.sampleRateHz;
}
