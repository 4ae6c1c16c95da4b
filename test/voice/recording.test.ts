import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWavHeader } from '../../src/voice/index.js';
import { CallRecorder } from '../../src/voice/recording/recorder.js';
import { TrackWriter } from '../../src/voice/recording/track.js';
import { scratchDir } from '../helpers/scratch.js';

/** The recording writer without a call: tracks on the call's timeline, streamed to disk, then one stereo WAV. */

const pcm = (value: number, bytes = 960) => {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 2) b.writeInt16LE(value, i);
  return b;
};

t.test(
  "a track follows the call's timeline: gaps become silence, jitter does not, early audio is appended",
  async (t) => {
    const dir = scratchDir('parley-track-');
    const track = new TrackWriter(join(dir, 'a.pcm'), 0);
    track.write(pcm(1), 0);
    track.write(pcm(2), 45); // 25 ms late: within the 100 ms slack, no gap
    track.write(pcm(3), 1000); // a second later: silence up to 1000 ms, then the audio
    track.write(pcm(4), 1000); // early (faster than real time): appended
    await track.close();
    const data = readFileSync(join(dir, 'a.pcm'));
    t.equal(data.length, 48_000 + 2 * 960, 'one second on the timeline, then two frames');
    t.equal(data.readInt16LE(0), 1);
    t.equal(data.readInt16LE(960), 2);
    t.equal(data.readInt16LE(1920), 0, 'silence in the gap');
    t.equal(data.readInt16LE(48_000), 3);
    t.equal(data.readInt16LE(48_960), 4);
    t.equal(track.bytes, data.length);
  },
);

t.test('a track batches writes and survives more than one chunk', async (t) => {
  const dir = scratchDir('parley-track-');
  const track = new TrackWriter(join(dir, 'b.pcm'), 0);
  for (let i = 0; i < 500; i++) track.write(pcm(i, 960), i * 20);
  await track.close();
  const data = readFileSync(join(dir, 'b.pcm'));
  t.equal(data.length, 500 * 960);
  t.equal(data.readInt16LE(499 * 960), 499);
});

t.test('the recorder builds one two-channel WAV (left caller, right assistant) and removes its parts', async (t) => {
  const dir = scratchDir('parley-rec-');
  let now = 0;
  const paths = {
    wav: join(dir, 'vs_x.wav'),
    caller: join(dir, 'c.pcm'),
    assistant: join(dir, 'a.pcm'),
    building: join(dir, 'vs_x.wav.part'),
  };
  const recorder = new CallRecorder('vs_x', paths, () => now);
  for (let i = 0; i < 50; i++) {
    now = i * 20;
    recorder.tap.caller(pcm(1000));
  }
  now = 500;
  for (let i = 0; i < 10; i++) recorder.tap.assistant(pcm(-2000));
  const result = await recorder.finish();
  t.same(await recorder.finish(), result, 'finishing twice builds it once');
  const wav = readFileSync(paths.wav);
  t.equal(result!.bytes, wav.length);
  const header = readWavHeader(wav)!;
  t.match(header, { channels: 2, sampleRateHz: 24_000, bitsPerSample: 16, dataOffset: 44 });
  const frames = header.dataBytes / 4;
  t.equal(frames, 24_000, 'one second: the longer of the two tracks (caller 1 s; assistant 0.5 s + 0.2 s)');
  const at = (ms: number) => 44 + Math.floor(ms * 24) * 4;
  t.equal(wav.readInt16LE(at(100)), 1000, 'left at 100 ms: the caller');
  t.equal(wav.readInt16LE(at(100) + 2), 0, 'right at 100 ms: silence (the assistant had not spoken)');
  t.equal(wav.readInt16LE(at(600) + 2), -2000, 'right at 600 ms: the assistant, placed where it was heard');
  t.equal(wav.readInt16LE(at(900) + 2), 0, 'right after it spoke: padded with silence');
  for (const p of [paths.caller, paths.assistant, paths.building]) t.notOk(existsSync(p), 'parts removed');
});
