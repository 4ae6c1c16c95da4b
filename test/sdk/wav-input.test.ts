import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { pcmFromWav, wavHeader } from '../../sdk/src/index.js';

/**
 * The SDK's tools (the load tool, the phone simulator, the example client) take a WAV as the caller's voice: a phone
 * recording (8 kHz μ-law), a CD-rate stereo file or Parley's own format all become PCM16 mono 24 kHz with the same
 * sound, measured by the tone's frequency; a format it cannot read is refused with what it was and how to convert it.
 * The files are written by sox, as a user's would be.
 */
const dir = mkdtempSync(join(tmpdir(), 'parley-wav-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function sox(name: string, ...format: string[]): Uint8Array {
  const path = join(dir, name);
  execFileSync('sox', ['-n', ...format, path, 'synth', '1', 'sine', '440', 'vol', '0.5']);
  return readFileSync(path);
}

/** Zero crossings per second / 2: the tone's frequency in Hz, for PCM16 mono 24 kHz. */
function frequency(pcm: Uint8Array): number {
  const view = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  let crossings = 0;
  for (let i = 2; i < pcm.byteLength; i += 2)
    if (view.getInt16(i - 2, true) < 0 !== view.getInt16(i, true) < 0) crossings++;
  return crossings / 2 / (pcm.byteLength / 48_000);
}

const cases: [string, Uint8Array][] = [
  ['8 kHz μ-law (a phone recording)', sox('mulaw.wav', '-r', '8000', '-e', 'mu-law', '-b', '8', '-c', '1')],
  ['8 kHz A-law', sox('alaw.wav', '-r', '8000', '-e', 'a-law', '-b', '8', '-c', '1')],
  ['44.1 kHz stereo PCM16', sox('cd.wav', '-r', '44100', '-e', 'signed', '-b', '16', '-c', '2')],
  ['16 kHz PCM16', sox('wide.wav', '-r', '16000', '-e', 'signed', '-b', '16', '-c', '1')],
  ['24 kHz PCM16 (the media format)', sox('media.wav', '-r', '24000', '-e', 'signed', '-b', '16', '-c', '1')],
];
for (const [what, file] of cases) {
  t.test(what, async (t) => {
    const pcm = pcmFromWav(file, what);
    t.ok(Math.abs(pcm.byteLength - 48_000) <= 96, `one second at 24 kHz PCM16 (${pcm.byteLength} bytes)`);
    const hz = frequency(pcm);
    t.ok(Math.abs(hz - 440) < 5, `the same tone (${hz.toFixed(1)} Hz)`);
  });
}

t.test('a file in the media format is read in place, without a copy', async (t) => {
  const file = cases[4]![1];
  t.equal(pcmFromWav(file).buffer, file.buffer);
});

t.test('what it cannot read is refused with what it was and how to convert it', async (t) => {
  t.throws(() => pcmFromWav(sox('deep.wav', '-r', '24000', '-e', 'signed', '-b', '24', '-c', '1'), 'deep.wav'), {
    message: /deep\.wav must be 16-bit PCM or G\.711.*24-bit.*ffmpeg/,
  });
  t.throws(() => pcmFromWav(new TextEncoder().encode('not a wav at all'), 'notes.txt'), {
    message: 'notes.txt is not a WAV file',
  });
  const header = wavHeader(0);
  t.throws(() => pcmFromWav(header.subarray(0, 36), 'cut.wav'), { message: 'cut.wav has no data chunk' });
});
