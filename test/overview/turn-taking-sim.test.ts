import t from 'tap';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { endWithKey, mintWithKey, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from '../voice/helpers.js';
import { mediaUrl, openMedia, speechFrames } from '../voice/media-client.js';

/**
 * The owner's end-of-speech silence with a hosted provider (the GPT-Live adapter against the shipped simulator, over
 * the media WebSocket): it reaches the provider session (in its instructions, the Live protocol's place for turn
 * taking) and the provider follows it: with 1500 ms, a caller's 800 ms pause inside a question does not end the
 * turn, so the question is answered once; with the provider's default, the pause ends the turn and it answers twice.
 */
t.test('a configured end-of-speech silence reaches the hosted provider, which waits that long', async (t) => {
  // A reply goes out whole (no frame pacing): once the simulator has the caller's audio, it has said everything.
  const sim = await startVoiceSimulator({ outputFrameIntervalMs: 0 });
  t.teardown(() => sim.close());
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER_URL: sim.url } });
  const owner = await ownerWithVoice(app);

  const ask = async (endOfSpeechSilenceMs: number | null, interruptAfterMs: number | null = null) => {
    const assistant = await voiceAssistant(app, owner, { voice: { endOfSpeechSilenceMs, interruptAfterMs } });
    const minted = await mintWithKey(app, owner, assistant);
    const media = await openMedia(mediaUrl(app, minted));
    t.teardown(async () => {
      media.ws.close();
      await endWithKey(app, owner, minted.sessionId);
    });
    await media.waitText((e) => e.type === 'state', 'the first state');
    const record = await waitFor(
      () => [...sim.stats.sessions.values()].find((r) => !r.ended && r.audioFramesIn === 0 && !seen.has(r.id)),
      'the provider session',
    );
    seen.add(record.id);
    // A question in two parts with an 800 ms pause between them, then two seconds of silence.
    const frames = [
      ...speechFrames(40),
      ...Array.from({ length: 40 }, () => Buffer.alloc(960)),
      ...speechFrames(40),
      ...Array.from({ length: 100 }, () => Buffer.alloc(960)),
    ];
    for (const frame of frames) media.send(frame);
    await waitFor(() => (record.audioFramesIn >= frames.length ? true : undefined), 'all the caller audio');
    return record;
  };
  const seen = new Set<string>();

  const patient = await ask(1500, 300);
  t.same(patient.turnTaking, { endOfSpeechSilenceMs: 1500, interruptAfterMs: 300 }, 'both reached the provider');
  t.equal(patient.outputTranscripts.length, 3, 'one answer (three words): the pause did not end the turn');

  const hasty = await ask(null);
  t.same(hasty.turnTaking, {}, "without a setting the provider's default applies");
  t.equal(hasty.outputTranscripts.length, 6, 'two answers: the pause ended the turn');
});
