import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readPcmWav, runVoiceCall } from '../../examples/voice-client.js';
import { readWavHeader, wavHeader } from '../../src/voice/recording/wav.js';
import { ownerWithVoice, startVoiceApp, voiceAssistant } from './helpers.js';
import { speechFrames } from './media-client.js';
import { scratchDir } from '../helpers/scratch.js';

/** The example client (the load generator's unit of work) against the real service and simulator. */
t.test('examples/voice-client.ts: a whole call from a WAV file to a WAV file', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const dir = scratchDir('parley-client-');
  const speech = Buffer.concat([...speechFrames(40), Buffer.alloc(40 * 960)]);
  writeFileSync(join(dir, 'in.wav'), Buffer.concat([wavHeader(speech.length, 1), speech]));
  const input = await readPcmWav(join(dir, 'in.wav'));
  t.equal(input.length, speech.length);

  const summary = await runVoiceCall({
    baseUrl: app.url,
    apiKey: owner.secret,
    assistantId: assistant.publicId,
    input,
    outputPath: join(dir, 'out.wav'),
    tailMs: 1500,
  });
  t.equal(summary.framesSent, 80);
  t.ok(
    summary.transcripts.some((x) => x.role === 'user'),
    "the caller's words came back as transcripts",
  );
  t.ok(
    summary.transcripts.some((x) => x.role === 'assistant'),
    "and the assistant's",
  );
  t.ok(summary.assistantBytesHeard > 0, 'the assistant was heard');
  t.equal(summary.assistantBytesMuted, 0, 'the server never sent audio while the gate was closed');
  t.ok(summary.gateDecisions >= 2);
  t.equal(summary.endReason, null, 'ended by the client');
  t.type(summary.billableSeconds, 'number');
  const out = readFileSync(join(dir, 'out.wav'));
  t.match(readWavHeader(out), {
    channels: 1,
    sampleRateHz: 24_000,
    bitsPerSample: 16,
    dataBytes: summary.assistantBytesHeard,
  });
  t.comment(`schedule lag max ${summary.maxLagMs.toFixed(1)} ms`);

  // A stereo file is read (downmixed); a 32-bit float one is refused with what it was.
  const stereo = join(dir, 'stereo.wav');
  writeFileSync(stereo, Buffer.concat([wavHeader(8, 2), Buffer.from([0, 1, 0, 3, 0, 1, 0, 3])]));
  t.same([...(await readPcmWav(stereo))].length, 4, 'two stereo frames are two mono samples');
  const float = Buffer.concat([wavHeader(8, 1), Buffer.alloc(8)]);
  float.writeUInt16LE(3, 20); // WAVE_FORMAT_IEEE_FLOAT
  float.writeUInt16LE(32, 34);
  const notWav = join(dir, 'float.wav');
  writeFileSync(notWav, float);
  await t.rejects(readPcmWav(notWav), /must be 16-bit PCM or G\.711.*format 3, 32-bit/);
});
