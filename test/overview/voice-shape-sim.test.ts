import t from 'tap';
import { endWithKey, mintWithKey, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from '../voice/helpers.js';
import { mediaUrl, openMedia } from '../voice/media-client.js';

/**
 * The first message with a hosted-style provider (the simulator, over the media WebSocket): the call says it once
 * as the caller connects, through the provider, the gate open for it; an assistant without one waits silently.
 */
t.test('the simulator says the first message as the caller connects', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const said = async (firstMessage: string | null) => {
    const assistant = await voiceAssistant(app, owner, { voice: { firstMessage } });
    const minted = await mintWithKey(app, owner, assistant);
    const media = await openMedia(mediaUrl(app, minted));
    t.teardown(async () => {
      media.ws.close();
      await endWithKey(app, owner, minted.sessionId);
    });
    return { media, minted };
  };
  const greeted = await said('Welcome to Acme Notes, how can I help');
  const words = await waitFor(() => {
    const text = greeted.media
      .texts('transcript')
      .filter((e) => e.role === 'assistant')
      .map((e) => e.text as string)
      .join(' ');
    return /help/.test(text) ? text : undefined;
  }, 'the first message');
  t.match(words, /^Welcome to Acme Notes, how can I help/, 'said before the caller said anything');
  await waitFor(() => (greeted.media.binaryBytes() > 0 ? true : undefined), 'its audio');
  t.pass('and heard (audio through the open gate)');

  // Without one: the caller speaks first; nothing is said before.
  const quiet = await said(null);
  await quiet.media.waitText((e) => e.type === 'state', 'the first state');
  const live = app.app.voice.sessions.get(quiet.minted.sessionId);
  t.ok(live?.assistant.firstMessage == null, 'no first message to say');
  t.equal(quiet.media.texts('transcript').filter((e) => e.role === 'assistant').length, 0, 'nothing said unasked');
});
