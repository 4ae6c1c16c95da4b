import { fileURLToPath } from 'node:url';
import t from 'tap';
import { WebSocket } from 'ws';
import {
  fromPcm16,
  syntheticSpeech,
  toPcm16,
  VoiceCall,
  type AudioFormat,
  type Transcript,
} from '../../sdk/src/voice/index.js';
import { readWavHeader } from '../../src/voice/index.js';
import { bearer, login } from '../helpers/identity.js';
import { runScript } from '../sdk/helpers.js';
import { endWithKey, mintWithKey, ownerWithVoice, post, startVoiceApp, voiceAssistant, waitFor } from './helpers.js';

/**
 * Calls in other audio formats than PCM16 24 kHz: the mint takes the format and echoes it, the media socket carries
 * it both ways (the simulator hears μ-law speech and answers in μ-law), the recording is a WAV of that format, and
 * the load tool runs with --audio pcmu.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function peakOf(pcm16: Uint8Array): number {
  const view = new DataView(pcm16.buffer, pcm16.byteOffset, pcm16.byteLength);
  let peak = 0;
  for (let i = 0; i + 1 < pcm16.byteLength; i += 2) peak = Math.max(peak, Math.abs(view.getInt16(i, true)));
  return peak;
}

t.test(
  'a μ-law call through VoiceCall: μ-law frames both ways, audible answer, transcript, billing, μ-law WAV',
  async (t) => {
    const app = await startVoiceApp(t);
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: true } });
    const audio: AudioFormat = { format: 'pcmu', sampleRateHz: 8000 };
    const call = new VoiceCall({
      baseUrl: app.url,
      apiKey: owner.secret,
      assistantId: assistant.publicId,
      WebSocket,
      recordingConsent: true,
      audio,
    });
    const transcripts: Transcript[] = [];
    const heard: Uint8Array[] = [];
    call.on('transcript', (x) => transcripts.push(x));
    call.on('audio', (chunk) => heard.push(Uint8Array.from(chunk)));
    const minted = await call.start();
    t.same(minted.audio, { format: 'pcmu', sampleRateHz: 8000, channels: 1 }, 'the mint echoes the format');

    // Two utterances of synthetic speech, μ-law 8 kHz, 20 ms (160-byte) frames in real time.
    const speech = fromPcm16(syntheticSpeech({ utterances: 2, speechMs: 800, pauseMs: 700, seed: 3 }), audio);
    t.equal(speech.byteLength, 3000 * 8, 'one byte a sample at 8 kHz');
    const started = performance.now();
    for (let offset = 0, n = 0; offset + 160 <= speech.length; offset += 160, n++) {
      const wait = started + n * 20 - performance.now();
      if (wait > 0) await sleep(wait);
      call.sendAudio(speech.subarray(offset, offset + 160));
    }
    await waitFor(
      () => (transcripts.some((x) => x.role === 'user') ? true : undefined),
      "the simulator's transcript of the caller's μ-law speech",
    );
    await waitFor(
      () => (heard.reduce((n, c) => n + c.byteLength, 0) >= 8 * 240 ? true : undefined),
      "the assistant's μ-law answer (one word: 240 ms)",
    );
    const answer = Buffer.concat(heard);
    t.ok(
      heard.every((c) => c.byteLength % 160 === 0),
      'assistant audio arrives in 20 ms μ-law frames (160 bytes)',
    );
    t.ok(peakOf(toPcm16(answer, audio)) > 3000, 'the answer decodes to audible speech, not silence');
    t.ok(
      transcripts.some((x) => x.role === 'assistant'),
      "the assistant's words are captioned",
    );
    const session = app.app.voice.sessions.get(minted.sessionId)!;
    t.same(session.audio, { format: 'pcmu', sampleRateHz: 8000 }, 'the session carries the format');
    const relay = app.app.voice.media!.relays.get(minted.sessionId)!;
    t.equal(relay.stats.callerFramesRefused, 0, 'no μ-law frame was refused');
    await waitFor(
      () => (relay.stats.callerBytes === speech.byteLength ? true : undefined),
      'every μ-law byte sent to cross the relay',
    );
    t.pass('every μ-law byte crossed the relay');

    const callMs = performance.now() - started;
    const ended = await call.end();
    t.match(ended, { status: 'ended', endReason: null, usageFinalized: true });
    t.ok(
      ended!.billableSeconds >= Math.floor(callMs / 1000) - 1 && ended!.billableSeconds <= Math.ceil(callMs / 1000) + 2,
      `billed the call's length (${ended!.billableSeconds} s for ${Math.round(callMs)} ms)`,
    );
    const messages = await app.database.sql<{ role: string }[]>`
      select role from messages where conversation_id = ${minted.conversationId} order by seq`;
    t.ok(
      messages.some((m) => m.role === 'user') && messages.some((m) => m.role === 'assistant'),
      'both sides are in the conversation',
    );

    // The recording: a two-channel μ-law WAV (format 7, 8 bits, 8 kHz) as long as the call.
    const cookie = await login(app.url, owner.email, owner.password);
    const path = `/api/assistants/${assistant.publicId}/voice/recordings/${minted.sessionId}`;
    const res = (await waitFor(async () => {
      const r = await fetch(`${app.url}${path}`, { headers: { cookie } });
      if (r.status === 404) return void (await r.arrayBuffer());
      return r;
    }, 'the recording'))!;
    const wav = Buffer.from(await res.arrayBuffer());
    const header = readWavHeader(wav)!;
    t.match(header, { formatTag: 7, channels: 2, sampleRateHz: 8000, bitsPerSample: 8 });
    t.equal(header.dataOffset + header.dataBytes, wav.length, 'the data runs to the end of the file');
    const seconds = header.dataBytes / 2 / 8000;
    t.ok(seconds >= speech.byteLength / 8000 - 0.1, `the recording holds the caller's speech (${seconds} s)`);
    const left = Buffer.alloc(header.dataBytes / 2);
    for (let i = 0; i < left.length; i++) left[i] = wav[header.dataOffset + i * 2]!;
    t.ok(peakOf(toPcm16(left, audio)) > 3000, "the caller's μ-law speech is on the left channel");
  },
);

t.test('the mint: pcm16 at 16 kHz and A-law accepted and echoed; other formats are 400 naming the field', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const pcm16k = await mintWithKey(app, owner, assistant, { audio: { format: 'pcm16', sampleRateHz: 16000 } });
  t.same((pcm16k as any).audio, { format: 'pcm16', sampleRateHz: 16000, channels: 1 });
  const alaw = await mintWithKey(app, owner, assistant, { audio: { format: 'pcma' } });
  t.same((alaw as any).audio, { format: 'pcma', sampleRateHz: 8000, channels: 1 }, 'the rate defaults per format');
  const plain = await mintWithKey(app, owner, assistant);
  t.same((plain as any).audio, { format: 'pcm16', sampleRateHz: 24000, channels: 1 }, 'no format: PCM16 24 kHz');
  for (const id of [pcm16k.sessionId, alaw.sessionId, plain.sessionId]) await endWithKey(app, owner, id);

  for (const bad of [
    { format: 'pcmu', sampleRateHz: 16000 },
    { format: 'pcm16', sampleRateHz: 8000 },
    { format: 'opus' },
  ]) {
    const res = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: assistant.publicId, capabilities: ['playback_gate'], audio: bad },
      bearer(owner.secret),
    );
    t.equal(res.status, 400, `${JSON.stringify(bad)} is refused`);
    t.match(JSON.stringify(res.body), /audio/, 'the refusal names the audio field');
  }
});

t.test('parley-loadtest --audio pcmu: μ-law calls against the echo simulator, round trip measured', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { instructions: 'Echo. [sim:echo]' });
  const cli = fileURLToPath(new URL('../../sdk/src/cli/loadtest/main.ts', import.meta.url));
  const run = await runScript(
    cli,
    [
      ...['--url', app.url, '--assistant', assistant.publicId, '--calls', '2', '--duration', '3s', '--ramp-up', '0s'],
      ...['--audio', 'pcmu', '--json', '--no-report', '--yes', '--quiet'],
    ],
    { env: { PARLEY_API_KEY: owner.secret }, timeoutMs: 60_000 },
  );
  t.equal(run.code, 0, `the tool exits 0 (${run.stderr.slice(-400)})`);
  const stdout = run.stdout;
  const report = JSON.parse(stdout);
  t.equal(report.voice.connected, 2, 'both calls connected');
  t.same(report.voice.refusals, {}, 'no refusals');
  t.ok(report.voice.echoDetected, 'the μ-law markers came back from the echo');
  t.ok(report.voice.roundTripMs.count > 0, 'round trips measured');
  // At most 2 calls x 4 s of 8 kB/s μ-law (PCM16 would be 48 kB/s, six times that). No lower bound but "some":
  // on a busy machine the calls connect late and send less of their 3 s.
  t.ok(
    report.voice.audio.sentBytes > 0 && report.voice.audio.sentBytes <= 2 * 4 * 8000,
    `μ-law sized traffic (${report.voice.audio.sentBytes} bytes)`,
  );
});
