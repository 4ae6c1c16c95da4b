import t from 'tap';
import type { VoiceAudioFormat } from '../../src/providers/voice/index.js';
import { loadPronunciations } from '../../src/providers/voice/local/engines.js';
import { prepareSessionModel, recognizeUtterance } from '../../src/providers/voice/local/recognizer.js';
import {
  addReadyTextDocument,
  callAudioToWav,
  framesOf,
  localEngines,
  silence,
  spoken,
  wavSamples,
} from '../providers/voice/local-helpers.js';
import {
  endWithKey,
  mintAsWidget,
  mintWithKey,
  ORIGIN,
  ownerWithVoice,
  post,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from './helpers.js';
import { bearer } from '../helpers/identity.js';
import { mediaUrl, openMedia } from './media-client.js';

/**
 * The local voice through the whole service: an owner uploads a document, a caller asks about it aloud (espeak-ng
 * speech over the media socket), the assistant's spoken answer, recognized back from the audio Parley sent, holds
 * the fact, and the conversation keeps the question as it was heard.
 */
const DOCUMENT =
  'Acme Notes is a note taking service for small teams. The premium plan costs 4.99 euros per month and includes ' +
  'unlimited notebooks. Notes are kept in data centres in Frankfurt. The support team answers emails within two days.';

t.test('a question asked aloud is answered aloud from the uploaded document', async (t) => {
  const engines = localEngines();
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local' } });
  t.equal(app.deps.voiceProvider?.kind, 'local');
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);

  const audio: VoiceAudioFormat = { format: 'pcm16', sampleRateHz: 24000 };
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  const question = framesOf(spoken('How much does the premium plan cost', audio), audio);
  for (const frame of [...silence(200, audio), ...question, ...silence(1000, audio)]) media.send(frame);

  const said = () =>
    media
      .texts('transcript')
      .filter((e) => e.role === 'assistant')
      .map((e) => e.text as string)
      .join(' ');
  await waitFor(() => said().endsWith('notebooks.'), 'the spoken answer', 30_000).catch((err: unknown) => {
    t.comment(JSON.stringify(media.texts()));
    throw err;
  });
  const asked = media
    .texts('transcript')
    .filter((e) => e.role === 'user')
    .map((e) => e.text as string)
    .join(' ');
  t.match(asked, /premium|plan|cost/, `the caller's words are shown as heard ("${asked}")`);
  t.match(said(), /4\.99 euros per month/, 'the assistant quotes the document');

  // What Parley actually sent, recognized back.
  const sent = Buffer.concat(media.events.filter((e) => e.kind === 'binary').map((e) => e.data));
  const model = await prepareSessionModel(DOCUMENT, await loadPronunciations(engines.dictionary));
  t.teardown(() => model.dispose());
  const heard = (
    await recognizeUtterance(wavSamples(callAudioToWav(sent, audio)), {
      engines,
      model,
      signal: new AbortController().signal,
    })
  )
    .map((w) => w.word)
    .join(' ');
  t.match(heard, /euros/, `the answer audio says the price ("${heard}")`);
  t.match(heard, /premium|month/);

  media.ws.close();
  await endWithKey(app, owner, minted.sessionId);
  const messages = await app.database.sql<
    Array<{ role: string; content: string; outcome: string | null; sources: Array<{ name: string }> }>
  >`
    select role, content, outcome, sources, provider, model from messages where conversation_id = ${minted.conversationId}
    order by created_at, id`;
  t.equal(messages[0]?.role, 'user');
  t.equal(messages[0]?.content, asked, 'the stored question is what was recognized, not invented');
  const answer = messages.find((m) => m.role === 'assistant');
  t.match(answer, { outcome: 'answered', sources: [{ name: 'Plans' }] }, 'the answer keeps its source');
  t.match(answer?.content, /4\.99 euros per month/, 'the stored answer is what was spoken');
  t.match(answer, { provider: 'voice:local', model: 'local-extractive' }, 'labelled as the local voice, no model');
});

t.test('a caller who talks over the first answer and asks again hears the second answer', async (t) => {
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local' } });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);

  const audio: VoiceAudioFormat = { format: 'pcm16', sampleRateHz: 24000 };
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  const said = () =>
    media
      .texts('transcript')
      .filter((e) => e.role === 'assistant')
      .map((e) => e.text as string)
      .join(' ');
  const first = framesOf(spoken('How much does the premium plan cost', audio), audio);
  for (const frame of [...silence(200, audio), ...first, ...silence(1000, audio)]) media.send(frame);
  await waitFor(() => /premium/.test(said()), 'the first answer begins', 30_000);

  // The caller talks over it with the next question.
  const second = framesOf(spoken('How does the support team answer', audio), audio);
  for (const frame of [...second, ...silence(1000, audio)]) media.send(frame);
  await waitFor(() => /two days/.test(said()), 'the second answer, spoken', 30_000).catch((err: unknown) => {
    t.comment(JSON.stringify(media.texts()));
    throw err;
  });
  t.notMatch(
    said(),
    /premium plan costs 4\.99 euros per month and includes unlimited notebooks\. .*two days/,
    'the first answer was cut short',
  );

  media.ws.close();
  await endWithKey(app, owner, minted.sessionId);
  const messages = await app.database.sql<Array<{ role: string; content: string; outcome: string | null }>>`
    select role, content, outcome from messages where conversation_id = ${minted.conversationId}
    order by created_at, id`;
  t.same(
    messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant'],
    'both questions and both answers are kept',
  );
  t.match(messages[3], { outcome: 'answered', content: /two days/ });
});

t.test(
  'the local voice says it takes the relay only, and a WebRTC mint is a clear 400 before anything starts',
  async (t) => {
    const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local' } });
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    const config = await fetch(`${app.url}/api/v1/widget/${assistant.publicId}/config`, {
      headers: { origin: ORIGIN },
    });
    t.equal(config.status, 200);
    t.same(
      ((await config.json()) as { voice: { transports: string[] } }).voice.transports,
      ['websocket'],
      'the widget config says so',
    );

    const offer = { type: 'webrtc', sdp: 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n' };
    const keyed = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'], transport: offer },
      bearer(owner.secret),
    );
    t.equal(keyed.status, 400, 'not a gateway failure');
    t.match(keyed.body, {
      code: 'VOICE_TRANSPORT_UNSUPPORTED',
      details: { field: 'body.transport', transports: ['websocket'] },
    });
    const widget = await mintAsWidget(app, assistant, { transport: offer });
    t.equal(widget.status, 400);
    t.equal(widget.body.code, 'VOICE_TRANSPORT_UNSUPPORTED');
    t.notMatch(app.logs.text(), /provider session not confirmed/, 'nothing to warn about');
    const rows = await app.database.sql<Array<{ count: number }>>`
      select count(*)::int as count from voice_sessions where assistant_id = ${assistant.id}`;
    t.equal(rows[0]?.count, 0, 'no session was started or recorded');
    const relayed = await mintWithKey(app, owner, assistant);
    t.ok(relayed.stream, 'the relay works');
    await endWithKey(app, owner, relayed.sessionId);
  },
);
