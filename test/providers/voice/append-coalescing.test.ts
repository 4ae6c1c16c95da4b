import t from 'tap';
import { AppendCoalescer, AppendFlusher, type AppendLink } from '../../../src/providers/voice/append-coalescer.js';
import { appendFrameAudioBytes } from '../../../src/providers/voice/protocol.js';
import { ManualClock, RelayResidence, residenceNow } from '../../../src/providers/voice/index.js';
import { Recorder, seqFrame, simProvider, startSim, waitFor } from './helpers.js';

// VOICE_PROVIDER_APPEND_MS: a caller frame goes to the provider at once when nothing is in flight on the link; frames
// are gathered into one append only while the previous write has not drained, for at most that many ms.

/** A link whose in-flight state the test sets. */
class FakeLink implements AppendLink {
  idle = true;
}

/** The audio bytes of each append the coalescer emitted. */
const sizes = (frames: Buffer[]): number[] => frames.map(appendFrameAudioBytes);

t.test('a link with nothing in flight: every frame leaves at once, alone, never waits', async (t) => {
  const clock = new ManualClock();
  const flusher = new AppendFlusher(clock, 10);
  const link = new FakeLink();
  const out: Buffer[] = [];
  const c = new AppendCoalescer(flusher, link, (f) => out.push(f));
  for (let i = 0; i < 5; i++) {
    c.push(seqFrame(i));
    t.equal(out.length, i + 1, `frame ${i} left as it came`);
  }
  t.same(sizes(out), [960, 960, 960, 960, 960], 'one append per caller frame');
  t.equal(flusher.size, 0, 'no timer armed');
  t.equal(clock.pending, 0);
});

t.test('while the previous write has not drained, frames gather and leave together when it drains', async (t) => {
  const clock = new ManualClock();
  const flusher = new AppendFlusher(clock, 10);
  const link = new FakeLink();
  const out: Buffer[] = [];
  const c = new AppendCoalescer(flusher, link, (f) => out.push(f));
  c.push(seqFrame(0));
  link.idle = false; // the first write is in flight
  c.push(seqFrame(1));
  c.push(seqFrame(2));
  t.equal(out.length, 1, 'the two frames after it wait');
  t.equal(c.staged, 1920);
  t.equal(flusher.size, 1, 'the one shared timer is armed for the cap');
  link.idle = true;
  c.drained();
  t.same(sizes(out), [960, 1920], 'they left as one append when the link drained');
  t.same(
    out.slice(1).map((f) => Buffer.from(f.toString('latin1').split('"audio":"')[1]!.slice(0, -2), 'base64')),
    [Buffer.concat([seqFrame(1), seqFrame(2)])],
    'the same bytes, in order',
  );
  t.equal(flusher.size, 0, 'nothing staged, nothing armed');
  c.push(seqFrame(3));
  t.same(sizes(out), [960, 1920, 960], 'the link is idle again: the next frame leaves at once');
});

t.test('a link that does not drain: staged audio leaves at the cap (or when 100 ms are staged)', async (t) => {
  const clock = new ManualClock();
  const flusher = new AppendFlusher(clock, 10);
  const link = new FakeLink();
  link.idle = false;
  const outA: Buffer[] = [];
  const outB: Buffer[] = [];
  const a = new AppendCoalescer(flusher, link, (f) => outA.push(f));
  const b = new AppendCoalescer(flusher, link, (f) => outB.push(f));
  a.push(seqFrame(0));
  clock.advance(3);
  b.push(seqFrame(0));
  t.equal(flusher.size, 2, 'both sessions wait on the one timer');
  clock.advance(2);
  t.same([outA.length, outB.length], [1, 0], 'the older one left within the cap, the younger one waits');
  clock.advance(5);
  t.same([outA.length, outB.length], [1, 1], 'and it left within its own cap');
  t.equal(flusher.size, 0);
  // A backlog read at once: 100 ms staged leaves at once; a frame larger than that goes as its own append.
  for (let i = 0; i < 6; i++) a.push(seqFrame(i));
  t.same(sizes(outA), [960, 4800], 'five 20 ms frames filled a staged append, which left without waiting');
  a.push(Buffer.alloc(9600));
  t.same(sizes(outA), [960, 4800, 960, 9600], 'the staged frame first, then the large one alone, in order');
  a.push(seqFrame(9));
  a.discard();
  clock.advance(100);
  t.equal(outA.length, 4, 'discarded audio never leaves');
  t.equal(clock.pending, 0, 'no timer left armed');
});

t.test('residence: every frame timed once, its wait (0 when sent at once) apart from its working time', async (t) => {
  const clock = new ManualClock();
  const flusher = new AppendFlusher(clock, 10);
  const residence = new RelayResidence();
  const link = new FakeLink();
  const out: Buffer[] = [];
  const c = new AppendCoalescer(flusher, link, (f) => out.push(f), flusher.stagingBytes, residence);
  c.push(seqFrame(0), residenceNow());
  t.equal(residence.callerToProvider.count, 1, 'a frame sent at once is timed (working)');
  t.equal(residence.appendWindow.count, 1, 'with a wait of its own');
  t.equal(residence.appendWindow.sumSeconds, 0, 'of zero');
  link.idle = false;
  c.push(seqFrame(1), residenceNow());
  c.push(seqFrame(2), residenceNow());
  t.equal(residence.callerToProvider.count, 1, 'a staged frame is not timed until it leaves');
  c.drained();
  t.equal(residence.callerToProvider.count, 3, 'both staged frames timed when they left');
  t.equal(residence.appendWindow.count, 3);
  // More small frames than the kept slots: every one still counted.
  for (let i = 0; i < 100; i++) c.push(Buffer.alloc(2), residenceNow());
  c.flush();
  t.equal(residence.callerToProvider.count, 103, 'a hundred 1-sample frames, each counted');
  t.equal(residence.appendWindow.count, 103);
  // Discarded audio never reached the provider: not timed.
  c.push(seqFrame(3), residenceNow());
  c.discard();
  clock.advance(200);
  t.equal(residence.callerToProvider.count, 103, 'discarded frames are not timed');
  // Frames pushed without a read time (nothing measured) are not counted either.
  c.push(seqFrame(4));
  c.push(seqFrame(5));
  c.flush();
  t.equal(residence.callerToProvider.count, 103, 'unstamped frames are not timed');
  t.equal(out.length, 4, 'and still go out, in order');
});

t.test('over a real socket that keeps up: one append per caller frame, spaced out or in a burst', async (t) => {
  const sim = await startSim(t, { defaultFaults: 'echo,echo=silent' });
  const rec = new Recorder();
  const session = await simProvider(sim, { appendMs: 10 }).startSession({}, { handlers: rec });
  for (let i = 0; i < 3; i++) {
    session.sendAudio(seqFrame(i));
    await waitFor(() => rec.audioBytes === (i + 1) * 960, `the echo of frame ${i}`);
  }
  // A loopback socket with room takes each write at once: nothing is in flight when the next frame comes.
  const burst = Array.from({ length: 8 }, (_, i) => seqFrame(10 + i));
  for (const frame of burst) session.sendAudio(frame);
  await waitFor(() => rec.audioBytes === 11 * 960, 'the echo of the burst');
  t.same(
    rec.audio.map((b) => b.length),
    Array.from({ length: 11 }, () => 960),
    'every frame its own append, none held',
  );
  t.same(rec.seqs, [0, 1, 2, ...burst.map((_, i) => 10 + i)], 'in order');
  t.equal(session.stats.audioFramesSent, 11, 'every caller frame counted as accepted');
  await session.close();
});

t.test('a mute (or any control frame) sends the staged audio first', async (t) => {
  const clock = new ManualClock();
  const flusher = new AppendFlusher(clock, 10);
  const link = new FakeLink();
  const out: Buffer[] = [];
  const c = new AppendCoalescer(flusher, link, (f) => out.push(f));
  link.idle = false;
  c.push(seqFrame(1));
  c.push(seqFrame(2));
  t.equal(out.length, 0);
  // What the session does before a control frame (sendControl): the staged audio leaves first, then the command.
  c.flush();
  t.same(sizes(out), [1920], 'the staged frames left as one append, ahead of the command');
  t.equal(flusher.size, 0);
});

t.test('APPEND_MS=0: one append per caller frame, even in a burst', async (t) => {
  const sim = await startSim(t, { defaultFaults: 'echo,echo=silent' });
  const rec = new Recorder();
  const session = await simProvider(sim, { appendMs: 0 }).startSession({}, { handlers: rec });
  for (let i = 0; i < 6; i++) session.sendAudio(seqFrame(i));
  await waitFor(() => rec.audioBytes === 6 * 960, 'every echo');
  t.same(rec.seqs, [0, 1, 2, 3, 4, 5], 'six appends, in order');
  await session.close();
});
