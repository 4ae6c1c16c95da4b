/**
 * The relay's per-frame work on one call, both directions, in one process and without a network: a fixed number of
 * 20 ms frames, so instruction counts under callgrind measure the work per frame whatever else runs on the machine.
 *
 *   npx tsx native-bench/frame-path.ts [--frames 20000] [--append-ms 10]       CPU ns per frame (a plain run)
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p \
 *     node --import tsx native-bench/frame-path.ts --frames 4000 --quiet       instructions: run it at two frame
 *                                                                            counts; (Ir(b) - Ir(a)) / (b - a) is
 *                                                                            per frame (start-up cancels out);
 *                                                                            --empty: the event loop's own share
 *
 * One iteration is one caller frame and one assistant frame, each in its own macrotask like a socket read:
 * - caller -> provider: the media pump (`src/voice/pump`: checks, counters, residence stamp), the append coalescer
 *   (`VOICE_PROVIDER_APPEND_MS`: at once when the link is idle), the append encoder, the outgoing queue and a real
 *   `ws` client WebSocket (its framing and masking) over an in-memory Duplex whose writes complete synchronously, as
 *   a loopback socket's do;
 * - provider -> caller: the server's `session.output_audio.delta` frame read by that `ws` client (parsing), the
 *   adapter's byte-level decode, the pump (gate, counters, residence) and a caller leg that counts bytes.
 * Not included: uWS (native), the session and wire glue between these parts (a few calls per frame), the timeline.
 * Figures are printed, never asserted. Never imported by src/.
 */
import { Duplex } from 'node:stream';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { AppendCoalescer, AppendFlusher } from '../src/providers/voice/append-coalescer.js';
import { systemClock, RelayResidence, type VoiceLinkState } from '../src/providers/voice/index.js';
import { OutgoingQueue } from '../src/providers/voice/outgoing-queue.js';
import { decodeOutputAudioFast, encodeAudioAppendFrame } from '../src/providers/voice/protocol.js';
import { MediaPump, type CallerLeg, type PumpEvents } from '../src/voice/pump/media-pump.js';
import type { RelayLink } from '../src/voice/pump/link.js';
import type { LiveSessionListener } from '../src/voice/session/live-session.js';

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '20000' },
    'append-ms': { type: 'string', default: '10' },
    quiet: { type: 'boolean', default: false },
    /** Only the two macrotasks per iteration: the floor to subtract (the event loop's own work). */
    empty: { type: 'boolean', default: false },
  },
});
const FRAMES = Number(values.frames);
const APPEND_MS = Number(values['append-ms']);

/** The provider socket: writes complete at once (a loopback socket with room), reads are pushed by the loop. */
class MemorySocket extends Duplex {
  written = 0;
  override _write(chunk: Buffer, _encoding: string, cb: (err?: Error | null) => void): void {
    this.written += chunk.length;
    cb();
  }
  override _writev(chunks: { chunk: Buffer }[], cb: (err?: Error | null) => void): void {
    for (const { chunk } of chunks) this.written += chunk.length;
    cb();
  }
  override _read(): void {}
}

const socket = new MemorySocket();
// A client WebSocket over the Duplex (ws supports a plain Duplex): client-side framing, masking and parsing.
const ws = new WebSocket(null as unknown as string, undefined, {});
(ws as unknown as { _isServer: boolean })._isServer = false;
(ws as unknown as { setSocket(s: Duplex, head: Buffer, o: object): void }).setSocket(socket, Buffer.alloc(0), {
  maxPayload: 16 * 1024 * 1024,
  skipUTF8Validation: true,
});

const residence = new RelayResidence();
const queue = new OutgoingQueue(96 * 1024, 192 * 1024, APPEND_MS > 0 ? () => coalescer?.drained() : undefined);
queue.attach(ws);
let appends = 0;
const coalescer =
  APPEND_MS > 0
    ? new AppendCoalescer(new AppendFlusher(systemClock, APPEND_MS, residence), queue, (frame) => {
        appends++;
        queue.push(frame, true);
      })
    : undefined;

let listener: LiveSessionListener | undefined;
const link: RelayLink = {
  sessionId: 'bench',
  sendAudio(pcm, readAt) {
    if (coalescer !== undefined) coalescer.push(pcm, readAt);
    else {
      appends++;
      queue.push(encodeAudioAppendFrame(pcm), true);
      if (readAt !== undefined) residence.callerToProvider.observeMs(performance.now() - readAt);
    }
    return true;
  },
  residence,
  mute() {},
  unmute() {},
  gateOpen: true,
  gateSeq: 1,
  linkState: 'connected' as VoiceLinkState,
  inputFramesDropped: 0,
  subscribe(l) {
    listener = l;
    return () => (listener = undefined);
  },
  attached() {},
  detached() {},
};
let callerBytes = 0;
const leg: CallerLeg = {
  sendAudio(audio) {
    callerBytes += audio.length;
    return 'sent';
  },
  bufferedAmount: () => 0,
};
const events: PumpEvents = {
  stateChanged() {},
  transcript() {},
  audioDropped() {},
  frameRefused() {},
  ended() {},
};
const pump = new MediaPump(leg, link, events, systemClock);
pump.start();

// What the provider wire does with each message (gpt-live-wire.ts): stamp, fast decode, hand to the session.
ws.on('message', (data: Buffer) => {
  residence.inboundReadAt = performance.now();
  const pcm = decodeOutputAudioFast(data);
  if (pcm !== undefined) listener?.onOutputAudio?.(pcm);
});

const callerFrame = Buffer.alloc(960, 7);
const delta = Buffer.from(
  `{"type":"session.output_audio.delta","delta":"${Buffer.alloc(960, 9).toString('base64')}"}`,
  'latin1',
);
// The server's frame as it arrives: FIN + text opcode, 16-bit length, unmasked.
const providerFrame = Buffer.concat([Buffer.from([0x81, 126, delta.length >> 8, delta.length & 0xff]), delta]);

const macrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function run(frames: number): Promise<void> {
  for (let i = 0; i < frames; i++) {
    if (!values.empty) pump.callerAudio(callerFrame);
    await macrotask();
    if (!values.empty) socket.push(providerFrame);
    await macrotask();
  }
}

await run(200); // warm-up (the JIT)
const before = { written: socket.written, callerBytes, appends };
const cpu0 = process.cpuUsage();
await run(FRAMES);
const cpu = process.cpuUsage(cpu0);
const ns = ((cpu.user + cpu.system) * 1000) / FRAMES;
if (!values.quiet) {
  process.stdout.write(
    `${FRAMES} frames each way, VOICE_PROVIDER_APPEND_MS=${APPEND_MS}: ${ns.toFixed(0)} ns of CPU per iteration ` +
      `(one caller frame and one assistant frame, two macrotasks); provider bytes ${socket.written - before.written}, ` +
      `appends ${appends - before.appends}, caller bytes ${callerBytes - before.callerBytes}\n`,
  );
}
ws.terminate();
