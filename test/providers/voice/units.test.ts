import t from 'tap';
import { OutgoingQueue, type OutgoingSink } from '../../../src/providers/voice/outgoing-queue.js';
import { EventDedupe } from '../../../src/providers/voice/event-dedupe.js';
import { nextReconnectDelay, isRecoverableCloseCode } from '../../../src/providers/voice/reconnect-policy.js';
import {
  decodeOutputAudioFast,
  encodeAudioAppend,
  encodeAudioAppendFrame,
  isLockConfirmed,
  buildSessionStart,
} from '../../../src/providers/voice/protocol.js';
import { errorFromHttpStatus } from '../../../src/providers/voice/errors.js';
import { parseFaults, faultsFromInstructions } from '../../../src/providers/voice/simulator/faults.js';

/**
 * A socket whose in-flight bytes the test controls; write callbacks fire when the test "drains" it. The queue watches
 * only writes made while bytes are buffered (a write to an empty socket completes at once in a real one).
 */
class FakeSink implements OutgoingSink {
  bufferedAmount = 0;
  sent: string[] = [];
  watched = 0;
  private callbacks: (() => void)[] = [];
  send(data: string, _options: unknown, cb?: () => void): void {
    this.sent.push(data);
    this.bufferedAmount += data.length;
    if (cb !== undefined) {
      this.watched++;
      this.callbacks.push(cb);
    }
  }
  drain(): void {
    this.bufferedAmount = 0;
    const cbs = this.callbacks;
    this.callbacks = [];
    for (const cb of cbs) cb();
  }
}

t.test('outgoing queue: direct while under high water, then bounded with oldest audio dropped', async (t) => {
  const sink = new FakeSink();
  const queue = new OutgoingQueue(10, 30);
  queue.attach(sink);
  queue.push('a0________', true); // 10 bytes: sent, now at high water
  queue.push('a1________', true); // over high water? 10 <= 10, still direct
  t.same(sink.sent, ['a0________', 'a1________']);
  t.equal(sink.watched, 1, 'only the write made while bytes were buffered is watched');
  queue.push('a2________', true);
  queue.push('CTRL', false);
  queue.push('a3________', true);
  queue.push('a4________', true); // 44 bytes waiting > 30: a2 goes
  t.equal(queue.dropped, 1);
  t.equal(queue.bytes, 24);
  queue.push('a5________', true); // a3 goes; CTRL is never dropped
  t.equal(queue.dropped, 2);
  sink.drain();
  t.same(sink.sent.slice(2), ['CTRL', 'a4________'], 'flushes in order up to high water');
  sink.drain();
  t.same(sink.sent.slice(4), ['a5________']);
  t.equal(queue.length, 0);
});

t.test('outgoing queue: detach drops waiting audio but keeps control for the next link', async (t) => {
  const first = new FakeSink();
  const queue = new OutgoingQueue(0, 1000);
  queue.attach(first);
  queue.push('audio-1', true);
  // Over the (soft) mark with no watched write ahead: it goes, watched, so a completion will flush what waits.
  queue.push('audio-2', true);
  queue.push('audio-3', true);
  queue.push('mute', false);
  t.same(first.sent, ['audio-1', 'audio-2']);
  queue.detach();
  t.equal(queue.dropped, 1);
  queue.push('instr', false);
  const second = new FakeSink();
  queue.attach(second);
  t.same(second.sent, ['mute']);
  second.drain();
  t.same(second.sent, ['mute', 'instr']);
});

t.test('outgoing queue: idle only with nothing buffered and nothing waiting; a drain is reported', async (t) => {
  const sink = new FakeSink();
  let drains = 0;
  const queue = new OutgoingQueue(100, 1000, () => drains++);
  t.equal(queue.idle, false, 'no socket, not idle');
  queue.attach(sink);
  t.equal(queue.idle, true);
  queue.push('a', true);
  t.equal(queue.idle, false, 'bytes buffered');
  queue.push('b', true);
  sink.drain();
  t.equal(queue.idle, true);
  t.equal(drains, 1, 'the watched write completed with nothing waiting: reported');
});

t.test('append frames are byte-identical to JSON.stringify and output deltas decode on both paths', async (t) => {
  const pcm = Buffer.from(Array.from({ length: 960 }, (_, i) => (i * 7) & 0xff));
  t.equal(
    encodeAudioAppend(pcm),
    JSON.stringify({ type: 'session.input_audio.append', audio: pcm.toString('base64') }),
  );
  t.same(encodeAudioAppendFrame(pcm), Buffer.from(encodeAudioAppend(pcm)), 'the Buffer form carries the same bytes');
  t.same(encodeAudioAppendFrame(Buffer.alloc(0)), Buffer.from(encodeAudioAppend(Buffer.alloc(0))));
  const fast = Buffer.from(JSON.stringify({ type: 'session.output_audio.delta', delta: pcm.toString('base64') }));
  t.same(decodeOutputAudioFast(fast), pcm);
  const reordered = Buffer.from(JSON.stringify({ delta: pcm.toString('base64'), type: 'session.output_audio.delta' }));
  t.equal(decodeOutputAudioFast(reordered), undefined, 'other key order falls back');
  const escaped = Buffer.from('{"type":"session.output_audio.delta","delta":"ab\\/cd"}');
  t.equal(decodeOutputAudioFast(escaped), undefined, 'escapes fall back');
  const extra = Buffer.from('{"type":"session.output_audio.delta","delta":"AAAA","x":"y"}');
  t.equal(decodeOutputAudioFast(extra), undefined, 'extra fields fall back');
});

t.test('the lock is confirmed only by an explicit empty list', async (t) => {
  const base = { id: 's', expires_at: 0, model: 'm', status: 'active' as const };
  t.equal(isLockConfirmed({ ...base, client: { data_channel: { allowed_client_events: [] } } }), true);
  t.equal(isLockConfirmed({ ...base, client: { data_channel: { allowed_client_events: 'all' } } }), false);
  t.equal(isLockConfirmed({ ...base, client: { data_channel: { allowed_client_events: ['session.close'] } } }), false);
  t.equal(isLockConfirmed({ ...base, client: { data_channel: {} } }), false, 'omitted means allow all');
  t.equal(isLockConfirmed(base), false);
  t.same(buildSessionStart({}, 'gpt-live-1').session.client, { data_channel: { allowed_client_events: [] } });
});

t.test('refused upgrades are classified by meaning', async (t) => {
  t.equal(errorFromHttpStatus(401, '').code, 'VOICE_PROVIDER_AUTH');
  t.equal(errorFromHttpStatus(429, '{"error":{"code":"insufficient_quota"}}').code, 'VOICE_PROVIDER_QUOTA');
  t.equal(errorFromHttpStatus(429, '{"error":{"code":"insufficient_quota"}}').fatal, true);
  t.equal(errorFromHttpStatus(429, 'slow down').fatal, false);
  t.equal(errorFromHttpStatus(400, 'bad client.data_channel').code, 'VOICE_PROVIDER_UNCONFIRMED');
  t.equal(
    errorFromHttpStatus(500, 'data_channel broke').code,
    'VOICE_PROVIDER_REFUSED',
    'only a 4xx naming it is a lock refusal',
  );
  t.equal(errorFromHttpStatus(404, '').fatal, true);
});

t.test('reconnect backoff grows, is capped, and stays inside the window', async (t) => {
  const opts = { initialDelayMs: 100, maxDelayMs: 1000, windowMs: 5000, random: () => 1 };
  t.same(
    [0, 1, 2, 3, 4, 5].map((a) => nextReconnectDelay(a, 0, opts)),
    [100, 200, 400, 800, 1000, 1000],
  );
  t.equal(nextReconnectDelay(3, 4900, opts), 100, 'squeezed into what is left');
  t.equal(nextReconnectDelay(0, 5000, opts), undefined, 'window spent');
  t.equal(nextReconnectDelay(0, 0, { ...opts, random: () => 0 }), 50, 'jitter halves at most');
  t.ok(isRecoverableCloseCode(1006) && isRecoverableCloseCode(1012));
  t.notOk(isRecoverableCloseCode(1000) || isRecoverableCloseCode(1008));
});

t.test('event dedupe remembers a bounded window of ids', async (t) => {
  const dedupe = new EventDedupe(3);
  t.same(
    ['a', 'b', 'a', 'c', 'd', 'a'].map((id) => dedupe.firstSeen(id)),
    [true, true, false, true, true, true],
  );
});

t.test('fault specs parse from options, headers and instruction tags', async (t) => {
  t.same(parseFaults('drop-after=200, refuse-reconnect echo'), { dropAfterMs: 200, refuseReconnect: 410, echo: true });
  t.same(parseFaults('lock-unconfirmed=all,start-refused,nonsense'), { lock: 'all', startRefused: 503 });
  t.same(faultsFromInstructions('Be nice [sim:withhold-closed] and [sim:usage-jump=60]'), {
    withholdClosed: true,
    usageJumpSeconds: 60,
  });
  t.same(faultsFromInstructions('no tags'), {});
});
