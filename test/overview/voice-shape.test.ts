import t from 'tap';
import type { VoiceAudioFormat } from '../../src/providers/voice/index.js';
import type { AssistantSettingsPatch } from '../../src/assistants/settings.js';
import { addReadyTextDocument, framesOf, localEngines, silence, spoken } from '../providers/voice/local-helpers.js';
import { endWithKey, mintWithKey, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from '../voice/helpers.js';
import { bearer } from '../helpers/identity.js';
import { mediaUrl, openMedia, type MediaClient } from '../voice/media-client.js';

/**
 * The owner's voice settings change a real call (the local voice, over the media WebSocket): the first message is
 * said when the caller connects, at the chosen speed; the end-of-speech silence decides where a turn ends; the
 * interruption setting decides whether the caller's speech cuts the assistant off.
 */
const DOCUMENT =
  'Acme Notes is a note taking service for small teams. The premium plan costs 4.99 euros per month and includes ' +
  'unlimited notebooks. Notes are kept in data centres in Frankfurt.';
const GREETING = 'Welcome to Acme Notes. I can tell you about our plans and where your notes are kept, just ask.';
const audio: VoiceAudioFormat = { format: 'pcm16', sampleRateHz: 24000 };

localEngines(); // fails (never skips) when the machine lacks the local voice's engines
const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local' } });
const owner = await ownerWithVoice(app);

async function call(voice: AssistantSettingsPatch['voice'], withDocument = false) {
  const assistant = await voiceAssistant(app, owner, { voice });
  if (withDocument) await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT);
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  t.teardown(async () => {
    media.ws.close();
    await endWithKey(app, owner, minted.sessionId);
  });
  return { media, minted };
}
const said = (media: MediaClient) => media.texts('transcript').filter((e) => e.role === 'assistant');
const saidText = (media: MediaClient) =>
  said(media)
    .map((e) => e.text as string)
    .join(' ');
const send = (media: MediaClient, frames: Buffer[]) => {
  for (const frame of frames) media.send(frame);
};

t.test('the first message is said as the caller connects, and the speed changes how long it takes', async (t) => {
  const spans: number[] = [];
  for (const speed of [1, 2]) {
    const { media } = await call({ firstMessage: GREETING, speed });
    send(media, silence(200, audio));
    await waitFor(() => saidText(media).endsWith('ask.'), `the first message at speed ${speed}`, 30_000);
    t.match(saidText(media), /^Welcome to Acme Notes\./, 'said before the caller asked anything');
    const words = said(media);
    spans.push(words.at(-1).startMs - words[0].startMs);
  }
  t.ok(spans[1]! < spans[0]! * 0.75, `twice the speed is said faster (${spans[1]} ms against ${spans[0]} ms)`);

  const quiet = await call({});
  send(quiet.media, [...silence(200, audio), ...framesOf(spoken('Where are notes kept', audio), audio)]);
  send(quiet.media, silence(1000, audio));
  await waitFor(() => (said(quiet.media).length > 0 ? true : undefined), 'the answer', 30_000);
  t.notMatch(saidText(quiet.media), /Welcome/, 'without a first message the assistant waits for the caller');
});

t.test("the end-of-speech silence decides where the caller's turn ends", async (t) => {
  /** Two questions with a 1500 ms pause between them; once `answered` was said, the call ends and its turns are read. */
  const questionsAsked = async (endOfSpeechSilenceMs: number | null, answered: RegExp[]) => {
    const { media, minted } = await call({ endOfSpeechSilenceMs }, true);
    send(media, [
      ...silence(200, audio),
      ...framesOf(spoken('How much does the premium plan cost', audio), audio),
      ...silence(1500, audio),
      ...framesOf(spoken('Where are notes kept', audio), audio),
      ...silence(3500, audio),
    ]);
    await waitFor(
      () => (answered.every((r) => r.test(saidText(media))) ? true : undefined),
      `the answers ${answered.join(', ')}`,
      45_000,
    );
    await endWithKey(app, owner, minted.sessionId);
    const rows = await app.database.sql<Array<{ content: string }>>`
      select content from messages where conversation_id = ${minted.conversationId} and role = 'user' order by seq`;
    return rows.map((r) => r.content);
  };
  const one = await questionsAsked(2500, [/notebooks\./]);
  t.equal(one.length, 1, 'a 1500 ms pause under 2500 ms of silence: one turn');
  t.match(one[0], /premium|plan|cost/);
  t.match(one[0], /notes|where/, 'both sentences in it');

  // With the default the pause ends the first turn, so no turn holds both questions. (Whether the first turn's words
  // are kept depends on whether its answer was still playing when the second question cut it off: timing, not the
  // setting; so the turns are not counted.)
  const two = await questionsAsked(null, [/notebooks\./, /Frankfurt/]);
  t.ok(two.length >= 1, `the caller's words were heard: ${JSON.stringify(two)}`);
  t.notOk(
    two.some((m) => /premium|plan|cost/.test(m) && /notes|where/.test(m)),
    `the default (600 ms): the pause ends the first turn, no turn holds both questions: ${JSON.stringify(two)}`,
  );
});

t.test("the interruption setting decides whether the caller's speech cuts the assistant off", async (t) => {
  const firstWords = async (media: MediaClient) => {
    send(media, silence(200, audio));
    await waitFor(() => (said(media).length >= 2 ? true : undefined), 'the first message to start', 30_000);
    // The caller talks over it: about a second of speech.
    send(media, [...framesOf(spoken('Where are notes kept', audio), audio), ...silence(1000, audio)]);
  };
  const steady = await call({ firstMessage: GREETING, interruptAfterMs: 2000 }, true);
  await firstWords(steady.media);
  await waitFor(() => saidText(steady.media).endsWith('ask.'), 'the whole first message', 30_000);
  t.pass('speech shorter than 2000 ms does not cut it off');

  const touchy = await call({ firstMessage: GREETING }, true);
  await firstWords(touchy.media);
  await waitFor(() => (/Frankfurt/.test(saidText(touchy.media)) ? true : undefined), 'the answer', 45_000);
  t.notMatch(saidText(touchy.media), /just ask\./, 'the default (60 ms) cut the first message off');
  t.match(saidText(touchy.media), /Frankfurt/, 'and answered the question');
});

t.test('the settings are validated, saved and read back', async (t) => {
  const assistant = await voiceAssistant(app, owner);
  const patch = (voice: Record<string, unknown>) =>
    fetch(`${app.url}/api/v1/assistants/${assistant.publicId}`, {
      method: 'PATCH',
      headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ settings: { voice } }),
    });
  const ok = await patch({ firstMessage: 'Hi!', voiceName: 'en-gb', speed: 1.25, interruptAfterMs: 300 });
  t.equal(ok.status, 200);
  t.match(((await ok.json()) as any).assistant.settings.voice, {
    firstMessage: 'Hi!',
    voiceName: 'en-gb',
    speed: 1.25,
    interruptAfterMs: 300,
    endOfSpeechSilenceMs: null,
  });
  for (const [field, value] of [
    ['speed', 5],
    ['interruptAfterMs', 5],
    ['endOfSpeechSilenceMs', 10_000],
    ['voiceName', 'no spaces please'],
    ['firstMessage', 'x'.repeat(501)],
  ] as const) {
    const res = await patch({ [field]: value });
    t.equal(res.status, 400, `${field} ${String(value).slice(0, 20)} refused`);
    t.match(JSON.stringify(await res.json()), new RegExp(field));
  }
});
