import t from 'tap';
import type { RealtimeSocket } from '../../src/http/index.js';
import { ManualClock, type VoiceLinkState, type VoiceTranscriptDelta } from '../../src/providers/voice/index.js';
import type { GateDecision } from '../../src/voice/session/gate.js';
import type { LiveSessionListener } from '../../src/voice/session/live-session.js';
import type { RelayLink } from '../../src/voice/pump/link.js';
import { MediaRelay, RELAY_CLOSE } from '../../src/voice/transports/websocket/relay.js';
import { PendingAudio } from '../../src/voice/pump/pending-audio.js';

/**
 * The transport-free relay core (docs/house-rules.md rule 8) with a fake RealtimeSocket and a fake provider link: no
 * sockets, no provider, no timing. The same core runs behind uWS in relay-socket.test.ts and e2e.test.ts.
 */

/** A caller socket whose reader can stall: sent bytes pile up in `buffered` until read() drains them. */
class FakeSocket implements RealtimeSocket<unknown> {
  readonly data = {};
  closed = false;
  buffered = 0;
  /** When true the caller reads everything at once (an idle, fast socket). */
  reading = true;
  readonly binary: Buffer[] = [];
  readonly text: any[] = [];
  endedWith: { code: number; reason: string } | undefined;
  constructor(private readonly limit = 512 * 1024) {}
  send(message: string | Uint8Array, binary: boolean): 'sent' | 'backpressure' | 'dropped' {
    if (this.closed) return 'dropped';
    const length = typeof message === 'string' ? Buffer.byteLength(message) : message.length;
    if (this.buffered > this.limit) return 'dropped';
    if (binary) this.binary.push(Buffer.from(message as Uint8Array));
    else this.text.push(JSON.parse(message as string));
    if (this.reading) return 'sent';
    this.buffered += length;
    return 'backpressure';
  }
  bufferedAmount() {
    return this.buffered;
  }
  cork(fn: () => void) {
    fn();
  }
  end(code = 1000, reason = '') {
    this.endedWith = { code, reason };
    this.closed = true;
  }
  terminate() {
    this.closed = true;
  }
  /** The caller catches up. */
  read() {
    this.buffered = 0;
  }
  events(type: string) {
    return this.text.filter((e) => e.type === type);
  }
}

class FakeLink implements RelayLink {
  readonly sessionId = 'vs_fake';
  gateOpen = false;
  gateSeq = 0;
  linkState: VoiceLinkState = 'connected';
  inputFramesDropped = 0;
  accept = true;
  readonly sent: Buffer[] = [];
  readonly controls: string[] = [];
  attaches = 0;
  detaches = 0;
  listener: LiveSessionListener | undefined;
  sendAudio(pcm: Buffer) {
    if (!this.accept) return false;
    this.sent.push(Buffer.from(pcm));
    return true;
  }
  mute() {
    this.controls.push('mute');
  }
  unmute() {
    this.controls.push('unmute');
  }
  subscribe(listener: LiveSessionListener) {
    this.listener = listener;
    return () => {
      this.listener = undefined;
    };
  }
  attached() {
    this.attaches++;
  }
  detached() {
    this.detaches++;
  }
  // provider side
  output(pcm: Buffer) {
    this.listener?.onOutputAudio?.(pcm);
  }
  gate(state: 'open' | 'closed') {
    this.gateOpen = state === 'open';
    this.gateSeq++;
    const decision: GateDecision = {
      type: 'gate',
      seq: this.gateSeq,
      state,
      reason: state === 'open' ? 'social' : 'user_speaking',
      inputEndMs: null,
    };
    this.listener?.onGate?.(decision);
  }
}

const ab = (buf: Buffer): ArrayBuffer => buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length) as ArrayBuffer;
const text = (s: string) => ab(Buffer.from(s));
const frame = (fill: number, bytes = 960) => Buffer.alloc(bytes, fill);

function setup(options: ConstructorParameters<typeof MediaRelay>[3] = {}) {
  const socket = new FakeSocket();
  const link = new FakeLink();
  const clock = new ManualClock(0);
  const relay = new MediaRelay(socket, link, clock, options);
  relay.start();
  return { socket, link, clock, relay };
}

t.test('open: attaches to the session and tells the caller the state', async (t) => {
  const { socket, link } = setup();
  t.equal(link.attaches, 1);
  t.same(socket.text, [{ type: 'state', link: 'connected', gate: 'closed', gateSeq: 0, muted: false }]);
});

t.test(
  'caller audio goes to the provider as is; bad frames are refused, counted and told (at most once a second)',
  async (t) => {
    const { socket, link, relay, clock } = setup();
    relay.onMessage(ab(frame(7)), true);
    relay.onMessage(ab(frame(8, 1920)), true);
    t.equal(link.sent.length, 2);
    t.same(link.sent[0], frame(7), 'the same PCM bytes reach the provider link');
    t.equal(relay.stats.callerBytes, 2880);

    relay.onMessage(ab(frame(1, 961)), true);
    relay.onMessage(ab(frame(1, 961)), true);
    relay.onMessage(ab(frame(1, 24_002)), true);
    t.equal(link.sent.length, 2, 'odd-length and oversized frames never reach the provider');
    t.equal(relay.stats.callerFramesRefused, 3);
    const notices = socket.text.filter((e) => e.notice === 'frame_refused');
    t.same(
      notices,
      [{ type: 'state', notice: 'frame_refused', why: 'not_whole_samples', bytes: 961, maxFrameBytes: 24_000 }],
      'one notice within the second',
    );
    clock.advance(1000);
    relay.onMessage(ab(frame(1, 30_000)), true);
    t.match(socket.text.at(-1), { notice: 'frame_refused', why: 'too_large', bytes: 30_000 });

    relay.onMessage(new ArrayBuffer(0), true);
    t.equal(relay.stats.callerFrames, 2, 'an empty frame is ignored');

    link.accept = false;
    relay.onMessage(ab(frame(9)), true);
    t.equal(relay.stats.callerFramesRefusedByLink, 1, 'a frame the provider link refused (reconnecting) is counted');
  },
);

t.test('caller text: only mute/unmute act; everything else is dropped and counted, never forwarded', async (t) => {
  const { socket, link, relay, clock } = setup();
  for (const junk of [
    '{"type":"response.create"}',
    '{"type":"session.update","session":{}}',
    '{"type":"session.input_audio.append","audio":"AAAA"}',
    'not json',
    '[1,2]',
    'null',
    JSON.stringify({ type: 'mute', pad: 'x'.repeat(300) }),
  ])
    relay.onMessage(text(junk), false);
  t.equal(relay.stats.callerTextDropped, 7);
  t.same(link.controls, []);
  t.same(link.sent, [], 'no text frame ever becomes provider audio or a control event');

  relay.onMessage(text('{"type":"mute"}'), false);
  relay.onMessage(text(' { "type" : "mute" } '), false);
  t.same(link.controls, ['mute'], 'a repeated mute is not sent again');
  t.match(socket.text.at(-1), { type: 'state', muted: true });
  relay.onMessage(text('{"type":"unmute"}'), false);
  t.same(link.controls, ['mute', 'unmute']);

  // A caller toggling as fast as it can: at most 4 toggles a second reach the provider.
  for (let i = 0; i < 20; i++) relay.onMessage(text(i % 2 === 0 ? '{"type":"mute"}' : '{"type":"unmute"}'), false);
  t.equal(link.controls.length, 4, 'toggles over the rate are dropped');
  t.ok(relay.stats.callerTextDropped > 7);
  clock.advance(1000);
  const before = link.controls.length;
  relay.onMessage(text(link.controls.at(-1) === 'mute' ? '{"type":"unmute"}' : '{"type":"mute"}'), false);
  t.equal(link.controls.length, before + 1, 'a new second, a new allowance');
});

t.test(
  'assistant audio is withheld while the gate is closed; captions too; the caller sees gate changes',
  async (t) => {
    const { socket, link, relay } = setup();
    link.output(frame(1));
    link.listener!.onOutputTranscript!({ text: 'hidden', startMs: 0, endMs: 240 } satisfies VoiceTranscriptDelta);
    t.equal(socket.binary.length, 0, 'nothing reaches the caller while closed');
    t.equal(relay.stats.assistantWithheldChunks, 1);
    t.equal(relay.stats.transcriptsWithheld, 1);

    link.gate('open');
    t.match(socket.text.at(-1), { type: 'state', gate: 'open', gateSeq: 1 });
    link.output(frame(2));
    link.listener!.onOutputTranscript!({ text: 'hello', startMs: 240, endMs: 480 });
    link.listener!.onInputTranscript!({ text: 'hi', startMs: 0, endMs: 400 });
    t.same(socket.binary, [frame(2)]);
    t.same(socket.events('transcript'), [
      { type: 'transcript', role: 'assistant', text: 'hello', startMs: 240, endMs: 480 },
      { type: 'transcript', role: 'user', text: 'hi', startMs: 0, endMs: 400 },
    ]);
    link.gate('closed');
    link.output(frame(3));
    t.equal(socket.binary.length, 1, 'closed again: withheld again');

    link.linkState = 'reconnecting';
    link.listener!.onLinkState!('reconnecting');
    t.match(socket.text.at(-1), { type: 'state', link: 'reconnecting', gate: 'closed' });
  },
);

t.test(
  'a slow caller: memory stays bounded, the oldest assistant audio is dropped, counted, and the caller told',
  async (t) => {
    const { socket, link, relay } = setup({ socketHighWaterBytes: 9600, pendingBytes: 9600 });
    link.gate('open');
    socket.reading = false; // the caller stops reading
    const frames = 5000; // 100 s of assistant audio
    let maxBuffered = 0;
    let maxPending = 0;
    const pcm = Buffer.alloc(960);
    for (let i = 0; i < frames; i++) {
      pcm.writeUInt32LE(i, 0); // the same buffer every time: the relay must copy what it keeps
      link.output(pcm);
      maxBuffered = Math.max(maxBuffered, socket.buffered);
      maxPending = Math.max(maxPending, relay.pendingBytes);
    }
    t.ok(
      maxBuffered <= 9600 + 960,
      `the socket backlog never grew past the high-water mark and one chunk (${maxBuffered})`,
    );
    t.ok(maxPending <= 9600, `the ring never grew past its capacity (${maxPending})`);
    const sentWhileStalled = socket.binary.length;
    t.ok(sentWhileStalled <= 11, `only the backlog allowance went out (${sentWhileStalled} frames)`);
    const expectedDropped = frames * 960 - relay.stats.assistantSentBytes - relay.pendingBytes;
    t.equal(
      relay.stats.assistantDroppedBytes,
      expectedDropped,
      'every byte is either sent, waiting, or counted as dropped',
    );
    t.ok(relay.stats.assistantDroppedBytes > 4_000_000, 'most of it was dropped');
    t.equal(socket.text.filter((e) => e.notice === 'audio_dropped').length, 0, 'not told while it cannot read');

    socket.reading = true;
    socket.read();
    relay.onDrain();
    t.equal(relay.pendingBytes, 0, 'the ring drained into the socket');
    const after = socket.binary.slice(sentWhileStalled);
    const seq = Buffer.concat(after);
    t.equal(seq.length, 9600, 'the newest 200 ms were kept');
    t.equal(
      seq.readUInt32LE(seq.length - 960),
      frames - 1,
      'ending with the newest frame: stale audio went, fresh audio stayed',
    );
    const notice = socket.text.find((e) => e.notice === 'audio_dropped');
    t.same(notice, {
      type: 'state',
      notice: 'audio_dropped',
      droppedBytes: relay.stats.assistantDroppedBytes,
      droppedMs: Math.round(relay.stats.assistantDroppedBytes / 48),
    });

    // Back to normal: straight through again.
    link.output(frame(5));
    t.same(socket.binary.at(-1), frame(5));
  },
);

t.test('closing the gate empties what a slow caller still had waiting', async (t) => {
  const { socket, link, relay } = setup();
  link.gate('open');
  socket.reading = false;
  for (let i = 0; i < 30; i++) link.output(frame(1));
  t.ok(relay.pendingBytes > 0);
  link.gate('closed');
  t.equal(relay.pendingBytes, 0);
  socket.read();
  relay.onDrain();
  const count = socket.binary.length;
  link.output(frame(1));
  t.equal(socket.binary.length, count, 'and nothing more while closed');
});

t.test('end, replace and close', async (t) => {
  const a = setup();
  a.link.listener!.onEnded!('usage_limit');
  t.same(a.socket.text.at(-1), { type: 'ended', endReason: 'usage_limit' });
  t.same(a.socket.endedWith, { code: RELAY_CLOSE.ended, reason: 'ended' });
  a.relay.onClose();
  t.equal(a.link.detaches, 0, 'an ended call is not a caller going away');

  const b = setup();
  b.relay.replace();
  t.same(b.socket.text.at(-1), { type: 'state', notice: 'replaced' });
  t.equal(b.socket.endedWith?.code, RELAY_CLOSE.replaced);
  t.equal(b.link.listener, undefined, 'the replaced relay stops listening');
  b.relay.onClose();
  t.equal(b.link.detaches, 0, 'a replaced socket does not start the disconnect grace');
  b.relay.onMessage(ab(frame(1)), true);
  t.equal(b.link.sent.length, 0, 'nothing is relayed after replacement');

  const c = setup();
  c.relay.onClose();
  t.equal(c.link.detaches, 1, 'a caller that went away starts the grace period');
  t.equal(c.link.listener, undefined);
});

t.test('recording tap: the caller audio and the assistant audio the caller was allowed to hear', async (t) => {
  const socket = new FakeSocket();
  const link = new FakeLink();
  const heard = { caller: 0, assistant: 0 };
  const relay = new MediaRelay(
    socket,
    link,
    new ManualClock(0),
    {},
    {
      caller: (pcm) => void (heard.caller += pcm.length),
      assistant: (pcm) => void (heard.assistant += pcm.length),
    },
  );
  relay.start();
  relay.onMessage(ab(frame(1)), true);
  link.output(frame(2));
  link.gate('open');
  link.output(frame(3));
  t.same(heard, { caller: 960, assistant: 960 }, 'withheld audio is not recorded');
});

t.test('PendingAudio keeps the newest whole samples', async (t) => {
  const ring = new PendingAudio(8);
  ring.push(Buffer.from([1, 2, 3, 4, 5, 6]));
  ring.push(Buffer.from([7, 8, 9, 10]));
  t.equal(ring.bytes, 8);
  t.equal(ring.droppedBytes, 2);
  const out: number[] = [];
  for (let chunk = ring.peek(4); chunk !== null; chunk = ring.peek(4)) {
    out.push(...chunk);
    ring.consume(chunk.length);
  }
  t.same(out, [3, 4, 5, 6, 7, 8, 9, 10]);
  ring.push(Buffer.alloc(20, 1));
  t.equal(ring.bytes, 8, 'a chunk bigger than the ring keeps only its newest part');
  t.throws(() => new PendingAudio(7));
});
