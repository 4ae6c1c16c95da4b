import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { readWavHeader } from '../../src/voice/index.js';
import { WebRtcCaller } from '../providers/voice/webrtc-caller.js';
import { endWithKey, live, mintWithKey, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from './helpers.js';
import { bearer } from '../helpers/identity.js';

/** Peak absolute sample of one channel of a two-channel PCM16 WAV. */
function peakOf(wav: Buffer, dataOffset: number, channel: 0 | 1): number {
  let peak = 0;
  for (let i = dataOffset + channel * 2; i + 1 < wav.length; i += 4)
    peak = Math.max(peak, Math.abs(wav.readInt16LE(i)));
  return peak;
}

/**
 * A consented WebRTC call is recorded from what the provider's sideband reflects: the caller's audio as the provider
 * heard it (left) and the assistant's (right), into the same two-channel WAV a relayed call gets.
 */
t.test('a WebRTC call with consent: one two-channel WAV, the caller and the assistant both audible', async (t) => {
  const sim = await startVoiceSimulator({ usageIntervalMs: 200, transcriptChunkMs: 100, wordMs: 40 });
  t.teardown(() => sim.close());
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER_URL: sim.url } });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: true } });
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());

  const minted = await mintWithKey(app, owner, assistant, {
    recordingConsent: true,
    transport: { type: 'webrtc', sdp: await caller.offer() },
  });
  t.match(minted.recording, { enabled: true, consented: true });
  caller.answer((minted.transport as { sdp: string }).sdp);
  caller.talk(true);
  const session = live(app, minted.sessionId);
  await waitFor(() => session.joined, 'the caller present');
  const joinedAt = performance.now();
  let words = 0;
  session.subscribe({ onInputTranscript: () => void words++ });
  await waitFor(() => words >= 2, "the caller's words over the sideband", 15_000);
  caller.talk(false);
  await waitFor(() => caller.voicedPacketsIn > 0, 'the assistant heard over WebRTC', 15_000);
  // The gate opened for the answer (the recording keeps what the caller may hear).
  await waitFor(() => session.gate.isOpen, 'the gate open');
  // The caller talks again: a second turn of the call is recorded too.
  const heard = words;
  caller.talk(true);
  await waitFor(() => words >= heard + 4, 'the caller heard again', 15_000);
  const callSeconds = (performance.now() - joinedAt) / 1000;
  const ended = await endWithKey(app, owner, minted.sessionId);
  t.equal(ended.status, 200);

  const path = app.app.voice.recordings!.pathOf(minted.sessionId);
  await waitFor(() => existsSync(path), 'the recording written', 15_000);
  const wav = readFileSync(path);
  const header = readWavHeader(wav)!;
  t.match(header, { channels: 2, sampleRateHz: 24_000, bitsPerSample: 16 });
  const recordedSeconds = header.dataBytes / 4 / 24_000;
  t.ok(
    recordedSeconds > callSeconds - 0.3,
    `${recordedSeconds.toFixed(2)} s recorded of a call of ${callSeconds.toFixed(2)} s with the caller present`,
  );
  t.ok(peakOf(wav, header.dataOffset, 0) > 1000, 'the caller is audible on the left');
  t.ok(peakOf(wav, header.dataOffset, 1) > 1000, 'the assistant is audible on the right');

  const viewed = await fetch(`${app.url}/api/v1/conversations/${minted.conversationId}`, {
    headers: bearer(owner.secret),
  });
  const conversation = (await viewed.json()) as { recordings: { sessionId: string; ready: boolean }[] };
  t.match(conversation.recordings, [{ sessionId: minted.sessionId, ready: true }], 'linked from the conversation');
});

t.test('a WebRTC call without consent is refused when the assistant records (no file either way)', async (t) => {
  const sim = await startVoiceSimulator({ usageIntervalMs: 200 });
  t.teardown(() => sim.close());
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER_URL: sim.url } });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: true } });
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  const res = await fetch(`${app.url}/api/v1/voice/sessions`, {
    method: 'POST',
    headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
    body: JSON.stringify({
      assistantId: assistant.publicId,
      capabilities: ['heartbeat', 'playback_gate'],
      transport: { type: 'webrtc', sdp: await caller.offer() },
    }),
  });
  t.equal(res.status, 400);
  t.match(await res.json(), { code: 'VOICE_CONSENT_REQUIRED' });
  t.equal(sim.stats.sessions.size, 0, 'no provider session was created');
});
