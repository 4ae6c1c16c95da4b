import t from 'tap';
import { parseFaults } from '../../../src/providers/voice/simulator/faults.js';
import { Recorder, seqFrame, simProvider, startSim, waitFor } from './helpers.js';

// The bench's realistic traffic shape: the simulator speaks the caller's audio back like a provider does, in
// 100 ms deltas at real-time pace, cut independently of how the caller framed it.

t.test('echo=paced parses to a 100 ms pace (or the one given)', async (t) => {
  t.same(parseFaults('echo=paced'), { echo: true, echoPacedMs: 100 });
  t.same(parseFaults('echo=paced:200'), { echo: true, echoPacedMs: 200 });
  t.same(parseFaults('echo'), { echo: true });
});

t.test(
  'paced echo returns the input audio whole and in order, re-cut into 100 ms deltas, with transcripts',
  async (t) => {
    const sim = await startSim(t, { defaultFaults: 'echo=paced' });
    const rec = new Recorder();
    const session = await simProvider(sim).startSession({}, { handlers: rec });
    // 280 ms of audio in one burst: it comes back as two whole 100 ms deltas and an 80 ms tail once the caller stopped.
    const frames = 14;
    const sent = Array.from({ length: frames }, (_, i) => seqFrame(i));
    for (const frame of sent) session.sendAudio(frame);
    await waitFor(() => rec.audioBytes === frames * 960, 'every byte back');
    t.same(
      rec.audio.map((b) => b.length),
      [4800, 4800, 960 * 4],
      'two 100 ms deltas, then the tail',
    );
    t.ok(Buffer.concat(rec.audio).equals(Buffer.concat(sent)), 'the same bytes in the same order');
    t.ok(rec.output.length >= 1 && rec.output.every((d) => d.text === 'echo'), 'the speech is transcribed as it goes');
    await session.close();
  },
);
