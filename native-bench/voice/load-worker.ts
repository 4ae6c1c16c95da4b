/**
 * One load-generator thread: opens its share of the callers, then sends a 20 ms PCM frame per caller on schedule
 * and timestamps the echo. Frames carry a sequence number and a marker in their first 8 bytes; the simulator echoes
 * the audio (frame for frame in the `echo` shape, re-cut into 100 ms deltas in the `realistic` one), and every
 * marker found in the returned audio times the round trip of its frame at the caller. Parley callers are the SDK's
 * VoiceCall (parley-client.ts): the schedule below feeds its sendAudio() and its `audio` event feeds the timing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { WebSocket } from 'ws';
import type { VoiceCall } from '../../sdk/src/voice/call.js';
import {
  FRAME_BYTES,
  FRAME_MARKER,
  RING,
  type GoMessage,
  type ReadyMessage,
  type WorkerConfig,
  type WorkerResult,
} from './protocol.js';
import { NotBuiltYet, parleyCall, startCall } from './parley-client.js';
import { assertLoopback } from '../harness/children.js';

const config = workerData as WorkerConfig;
const port = parentPort!;
const epochNow = (): number => performance.timeOrigin + performance.now();

const OUTPUT_PREFIX = Buffer.from('{"type":"session.output_audio.delta","delta":"', 'latin1');
const APPEND_PREFIX = '{"type":"session.input_audio.append","audio":"';
const SESSION_START = JSON.stringify({
  type: 'session.start',
  session: {
    model: 'gpt-live-1',
    client: { data_channel: { allowed_client_events: [] } },
    audio: { format: { type: 'audio/pcm', rate: 24000 } },
  },
});

// A 440 Hz tone, so a non-echo simulator would still hear "speech"; bytes 0-3 are overwritten by the sequence
// number, bytes 4-7 carry the frame marker.
const TONE = Buffer.alloc(FRAME_BYTES);
for (let i = 0; i < FRAME_BYTES / 2; i++)
  TONE.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 24000)), i * 2);
FRAME_MARKER.copy(TONE, 4);
const MARKER_LENGTH = FRAME_MARKER.length;

interface Caller {
  /** pcm and gpt-live: the caller's own socket; parley: the VoiceCall's. */
  ws: WebSocket | undefined;
  call: VoiceCall | undefined;
  phase: number;
  nextDue: number;
  seq: number;
  frame: Buffer;
  sentAt: Float64Array;
  sentSeq: Int32Array;
  measured: Uint8Array;
  closed: boolean;
}

const callers: Caller[] = [];
let measuring = { from: Infinity, to: -Infinity };
let rtts = new Float64Array(1024);
let rttCount = 0;
const counts = { measuredSent: 0, measuredReceived: 0, totalSent: 0, totalReceived: 0, socketsClosedEarly: 0 };
let stopped = false;

function onEcho(caller: Caller, seq: number): void {
  const at = epochNow();
  const slot = seq & (RING - 1);
  if (caller.sentSeq[slot] !== seq || caller.sentAt[slot] === 0) return;
  counts.totalReceived++;
  if (caller.measured[slot] === 1) {
    counts.measuredReceived++;
    if (rttCount === rtts.length) {
      const grown = new Float64Array(rtts.length * 2);
      grown.set(rtts);
      rtts = grown;
    }
    rtts[rttCount++] = at - caller.sentAt[slot]!;
  }
  caller.sentAt[slot] = 0;
}

/** Every frame start in a chunk of returned audio (a marker at an even offset, its sequence number before it). */
function onAudio(caller: Caller, bytes: Uint8Array): void {
  // VoiceCall hands over the Buffer `ws` received (parley-client.ts keeps binaryType nodebuffer): no copy here either.
  const pcm = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = pcm.indexOf(FRAME_MARKER, 4);
  while (at !== -1) {
    if ((at & 1) === 0) onEcho(caller, pcm.readInt32LE(at - 4));
    at = pcm.indexOf(FRAME_MARKER, at + MARKER_LENGTH);
  }
}

function newCaller(index: number, ws: WebSocket | undefined, call: VoiceCall | undefined): Caller {
  return {
    ws,
    call,
    phase: (index / config.totalCallers) * config.frameMs,
    nextDue: 0,
    seq: 0,
    frame: Buffer.from(TONE),
    sentAt: new Float64Array(RING),
    sentSeq: new Int32Array(RING).fill(-1),
    measured: new Uint8Array(RING),
    closed: false,
  };
}

function onClosed(caller: Caller): void {
  if (caller.closed) return;
  caller.closed = true;
  if (!stopped) counts.socketsClosedEarly++;
}

function makeCaller(ws: WebSocket, index: number): Caller {
  const caller = newCaller(index, ws, undefined);
  ws.on('close', () => onClosed(caller));
  ws.on('error', () => undefined);
  if (config.protocol === 'gpt-live') {
    const echo = config.shape === 'echo';
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary || data.length < OUTPUT_PREFIX.length + 8) return;
      if (data.compare(OUTPUT_PREFIX, 0, OUTPUT_PREFIX.length, 0, OUTPUT_PREFIX.length) !== 0) return;
      // Echo: one frame per delta, and 8 base64 characters carry its first 6 bytes (the sequence number).
      if (echo)
        onEcho(
          caller,
          Buffer.from(data.toString('latin1', OUTPUT_PREFIX.length, OUTPUT_PREFIX.length + 8), 'base64').readInt32LE(0),
        );
      else onAudio(caller, Buffer.from(data.toString('latin1', OUTPUT_PREFIX.length, data.length - 2), 'base64'));
    });
  } else {
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary && data.length >= 8) onAudio(caller, data);
    });
  }
  return caller;
}

/** A Parley caller: the SDK's VoiceCall (mint, media socket, gate stream, heartbeats; end on close). */
async function connectParley(index: number): Promise<Caller> {
  const call = parleyCall(config.parley!);
  const caller = newCaller(index, undefined, call);
  // Subscribed before start(): the first assistant audio can arrive as soon as the media socket opens.
  call.on('audio', (pcm) => {
    if (pcm.byteLength >= 8) onAudio(caller, pcm);
  });
  call.on('ended', () => onClosed(caller));
  call.on('error', () => undefined); // counted through `ended` and the stats
  await startCall(call);
  return caller;
}

/**
 * Open a socket and, for protocols with a readiness frame, resolve only once it arrived. The listener is attached
 * before the upgrade completes: a fast server's first frame can arrive in the same read as the 101 and would be
 * emitted before an `await` continuation could subscribe.
 */
function openSocket(
  url: string,
  readyWhen?: (data: Buffer, isBinary: boolean) => boolean,
  onOpen?: (ws: WebSocket) => void,
): Promise<WebSocket> {
  assertLoopback(url);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.binaryType = 'nodebuffer';
    const timer = setTimeout(() => done(new Error('not ready within 10 s')), 10_000);
    const onMessage = (data: Buffer, isBinary: boolean): void => {
      if (readyWhen?.(data, isBinary)) done();
    };
    const onClose = (code: number): void => done(new Error(`closed (${code}) before it was ready`));
    function done(err?: Error): void {
      clearTimeout(timer);
      ws.off('message', onMessage);
      ws.off('close', onClose);
      if (err === undefined) return resolve(ws);
      ws.terminate();
      reject(err);
    }
    ws.on('message', onMessage);
    ws.once('close', onClose);
    ws.once('open', () => {
      onOpen?.(ws);
      if (readyWhen === undefined) done();
    });
    ws.once('unexpected-response', (_req, res) => done(new Error(`upgrade answered ${res.statusCode}`)));
    ws.once('error', (err) => done(err));
  });
}

async function connect(index: number): Promise<Caller> {
  if (config.protocol === 'parley') return connectParley(index);
  const ws =
    config.protocol === 'gpt-live'
      ? await openSocket(
          config.url!,
          (d, bin) => !bin && d.includes('"session.started"'),
          (socket) => socket.send(SESSION_START),
        )
      : await openSocket(config.url!, (d, bin) => !bin && d.includes('"ready"'));
  return makeCaller(ws, index);
}

async function connectAll(): Promise<ReadyMessage> {
  let next = 0;
  let failed = 0;
  let firstError: string | undefined;
  let notBuilt = false;
  const lane = async (): Promise<void> => {
    while (next < config.callers) {
      const index = config.firstCaller + next++;
      try {
        callers.push(await connect(index));
      } catch (err) {
        failed++;
        notBuilt ||= err instanceof NotBuiltYet;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, config.connectConcurrency) }, lane));
  return {
    type: 'ready',
    connected: callers.length,
    failed,
    ...(firstError === undefined ? {} : { firstError }),
    ...(notBuilt ? { notBuilt } : {}),
  };
}

function sendFrame(caller: Caller, at: number): void {
  const seq = caller.seq++;
  const slot = seq & (RING - 1);
  caller.sentSeq[slot] = seq;
  caller.sentAt[slot] = at;
  const inWindow = at >= measuring.from && at < measuring.to;
  caller.measured[slot] = inWindow ? 1 : 0;
  counts.totalSent++;
  if (inWindow) counts.measuredSent++;
  caller.frame.writeInt32LE(seq, 0);
  if (caller.call !== undefined) caller.call.sendAudio(caller.frame);
  else if (config.protocol === 'gpt-live') caller.ws!.send(APPEND_PREFIX + caller.frame.toString('base64') + '"}');
  else caller.ws!.send(caller.frame, { binary: true });
}

function run(go: GoMessage): Promise<{ maxLagMs: number; lateFrames: number }> {
  measuring = { from: go.startEpoch + go.warmupMs, to: go.startEpoch + go.warmupMs + go.measureMs };
  const endSend = measuring.to;
  callers.sort((a, b) => a.phase - b.phase);
  for (const c of callers) c.nextDue = go.startEpoch + c.phase;
  let cursor = 0;
  let maxLagMs = 0;
  let lateFrames = 0;
  return new Promise((resolve) => {
    const tick = (): void => {
      const now = epochNow();
      if (now >= endSend || callers.length === 0) return resolve({ maxLagMs, lateFrames });
      // Callers are sorted by phase and share one period, so the next due caller is always at the cursor.
      for (;;) {
        const caller = callers[cursor]!;
        if (caller.nextDue > now) break;
        const lag = now - caller.nextDue;
        if (lag > maxLagMs) maxLagMs = lag;
        if (lag > config.frameMs / 2) lateFrames++;
        if (!caller.closed) sendFrame(caller, now);
        caller.nextDue += config.frameMs;
        cursor = cursor + 1 === callers.length ? 0 : cursor + 1;
      }
      setTimeout(tick, 1);
    };
    setTimeout(tick, Math.max(0, go.startEpoch - epochNow()));
  });
}

port.on('message', (message: GoMessage | { type: 'close' }) => {
  if (message.type === 'go') {
    void (async () => {
      const { maxLagMs, lateFrames } = await run(message);
      await new Promise((resolve) => setTimeout(resolve, message.drainMs));
      stopped = true;
      let heartbeats = 0;
      let heartbeatFailures = 0;
      let gateLines = 0;
      for (const c of callers) {
        heartbeats += c.call?.stats.heartbeats ?? 0;
        heartbeatFailures += c.call?.stats.heartbeatFailures ?? 0;
        gateLines += c.call?.stats.gateDecisions ?? 0;
      }
      const result: WorkerResult = {
        type: 'done',
        ...counts,
        rtts: rtts.slice(0, rttCount),
        maxLagMs,
        lateFrames,
        heartbeats,
        heartbeatFailures,
        gateLines,
      };
      port.postMessage(result);
    })();
  } else {
    stopped = true;
    void Promise.all(
      callers.map(async (c) => {
        c.ws?.close();
        await c.call?.end().catch(() => undefined);
      }),
    ).then(() => port.postMessage({ type: 'closed' }));
  }
});

void connectAll().then((ready) => port.postMessage(ready));
