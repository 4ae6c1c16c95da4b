import t from 'tap';
import { AppendCoalescer, AppendFlusher } from '../../../src/providers/voice/append-coalescer.js';
import { ManualClock, RelayResidence, residenceNow } from '../../../src/providers/voice/index.js';
import { Recorder, seqFrame, simProvider, startSim, waitFor } from './helpers.js';

// VOICE_PROVIDER_APPEND_MS: caller frames reach the provider in one append per window, the same bytes in order.

t.test('20 ms frames reach the provider as 100 ms appends, same bytes, same order', async (t) => {
  const sim = await startSim(t, { defaultFaults: 'echo,echo=silent', recordWire: true });
  const rec = new Recorder();
  const session = await simProvider(sim, { appendMs: 100 }).startSession({}, { handlers: rec });
  const sent = Array.from({ length: 15 }, (_, i) => seqFrame(i));
  for (const frame of sent) session.sendAudio(frame);
  await waitFor(() => rec.audioBytes === 15 * 960, 'the echo of every frame');
  t.same(
    rec.audio.map((b) => b.length),
    [4800, 4800, 4800],
    'three appends of five frames each',
  );
  t.ok(Buffer.concat(rec.audio).equals(Buffer.concat(sent)), 'the provider heard exactly what the caller sent');
  t.equal(session.stats.audioFramesSent, 15, 'every caller frame counted as accepted');
  await session.close();
});

t.test(
  'a mute (or any control frame) sends the staged audio first; a quiet caller is flushed after the window',
  async (t) => {
    const sim = await startSim(t, { defaultFaults: 'echo,echo=silent', recordWire: true });
    const rec = new Recorder();
    const session = await simProvider(sim, { appendMs: 100 }).startSession({}, { handlers: rec });
    session.sendAudio(seqFrame(1));
    session.sendAudio(seqFrame(2));
    session.mute();
    await waitFor(
      () => sim.stats.sessions.get(session.id)!.clientEvents.includes('session.input_audio.mute'),
      'the mute',
    );
    const wire = sim.stats.sessions.get(session.id)!.wireIn;
    const appendAt = wire.findIndex((f) => f.includes('session.input_audio.append'));
    const muteAt = wire.findIndex((f) => f.includes('session.input_audio.mute'));
    t.ok(appendAt !== -1 && appendAt < muteAt, 'the two staged frames went out before the mute');
    session.unmute();
    session.sendAudio(seqFrame(3));
    await waitFor(() => rec.audioBytes === 3 * 960, 'the lone frame after the window', 3000);
    t.same(rec.seqs, [1, 3], 'the partial windows arrived in order (two frames, then one)');
    await session.close();
  },
);

t.test('one shared flusher: partial windows leave once older than the window, whole ones at once', async (t) => {
  const clock = new ManualClock();
  const flusher = new AppendFlusher(clock, 100);
  const out: Buffer[][] = [[], []];
  const a = new AppendCoalescer(flusher, (f) => out[0]!.push(f));
  const b = new AppendCoalescer(flusher, (f) => out[1]!.push(f));
  a.push(seqFrame(0));
  clock.advance(60);
  b.push(seqFrame(0));
  t.equal(flusher.size, 2, 'both sessions wait on the one timer');
  clock.advance(40);
  t.same([out[0]!.length, out[1]!.length], [1, 0], 'the older window left at its age, the younger one waits');
  clock.advance(100);
  t.same([out[0]!.length, out[1]!.length], [1, 1]);
  t.equal(flusher.size, 0, 'nothing staged, nothing armed');
  for (let i = 0; i < 5; i++) a.push(seqFrame(i));
  t.equal(out[0]!.length, 2, 'a full window leaves without waiting for the timer');
  a.push(seqFrame(9));
  a.discard();
  clock.advance(500);
  t.equal(out[0]!.length, 2, 'discarded audio never leaves');
});

t.test('residence: each staged frame is timed once, its window wait apart from its working time', async (t) => {
  const clock = new ManualClock();
  const flusher = new AppendFlusher(clock, 40);
  const residence = new RelayResidence();
  const out: Buffer[] = [];
  const c = new AppendCoalescer(flusher, (f) => out.push(f), flusher.windowBytes, residence);
  // 40 ms at 24 kHz PCM16 is 1,920 bytes: two 960-byte frames fill a window, the second leaves it at once.
  c.push(seqFrame(0), residenceNow());
  t.equal(residence.callerToProvider.count, 0, 'a staged frame is not timed until its window leaves');
  c.push(seqFrame(1), residenceNow());
  t.equal(out.length, 1, 'the full window left');
  t.equal(residence.callerToProvider.count, 2, 'both frames timed (working)');
  t.equal(residence.appendWindow.count, 2, 'and their window wait, as its own figure');
  // A 1,440-byte frame spans two windows: it counts once, in the window its last byte is in.
  c.push(seqFrame(2), residenceNow());
  c.push(Buffer.alloc(1440), residenceNow());
  t.equal(out.length, 2);
  t.equal(residence.callerToProvider.count, 3, 'the frame completing the window counted; the spanning one not yet');
  clock.advance(80);
  t.equal(out.length, 3, 'the partial window aged out');
  t.equal(residence.callerToProvider.count, 4, 'the spanning frame counted once, when its last byte left');
  t.equal(residence.appendWindow.count, 4);
  // More small frames than the kept slots: every one still counted.
  for (let i = 0; i < 100; i++) c.push(Buffer.alloc(2), residenceNow());
  c.flush();
  t.equal(residence.callerToProvider.count, 104, 'a hundred 1-sample frames, each counted');
  t.equal(residence.appendWindow.count, 104);
  // Discarded audio never reached the provider: not timed.
  c.push(seqFrame(3), residenceNow());
  c.discard();
  clock.advance(200);
  t.equal(residence.callerToProvider.count, 104, 'discarded frames are not timed');
  // Frames pushed without a read time (nothing measured) are not counted either.
  c.push(seqFrame(4));
  c.push(seqFrame(5));
  t.equal(residence.callerToProvider.count, 104, 'unstamped frames are not timed');
  t.equal(out.length, 5, 'and still go out, in order');
});
