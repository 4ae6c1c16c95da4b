/**
 * The local voice in Debian's Chromium: an owner uploads a document, opens the Playground and asks about it aloud
 * through the fake microphone (espeak-ng speech); the widget shows the caller's words as heard and the assistant's
 * answer quoting the document; the audio Parley sent, recognized back, holds the fact; the conversation stores the
 * question as recognized.
 */
import t from 'tap';
import { buildWidget } from '../../web/widget/build.js';
import { loadPronunciations } from '../../src/providers/voice/local/engines.js';
import { prepareSessionModel, recognizeUtterance } from '../../src/providers/voice/local/recognizer.js';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, makeSpeechWav, untilWidgetHook, signInToDashboard } from '../helpers/browser.js';
import { addReadyTextDocument, callAudioToWav, localEngines, wavSamples } from '../providers/voice/local-helpers.js';
import { live, ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';
import { ensureDashboardBuilt } from './dashboard-build.js';

const DOCUMENT =
  'Acme Notes is a note taking service for small teams. The premium plan costs 4.99 euros per month and includes ' +
  'unlimited notebooks. Notes are kept in data centres in Frankfurt.';

await ensureDashboardBuilt();
await buildWidget();
const engines = localEngines();
const app = await startTestApp(t, { env: { VOICE_PROVIDER: 'local' } });
const owner = await ownerWithVoice(app);
const assistant = await voiceAssistant(app, owner);
// Long trailing silence: the fake microphone loops its file, and the answer must be heard before it asks again.
const wav = await makeSpeechWav(t, 'How much does the premium plan cost?', 15);
const browser = await launchBrowser(t, { fakeAudioWav: wav });
const page = await browser.newPage();
page.setDefaultTimeout(20_000);

t.test('asked aloud in the playground, answered aloud from the document', async (t) => {
  t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);

  await signInToDashboard(page, app.url, owner);
  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/playground`);
  const start = page.getByRole('button', { name: 'Start voice call' });
  await start.waitFor();
  t.equal(await page.getByRole('note').count(), 0, 'no "voice is simulated" note: the local voice runs');
  await page.evaluate(
    `(() => { const el = document.querySelector('parley-assistant'); el.setAttribute('data-test', ''); el.parentNode.append(el); })()`,
  );
  await start.click();
  const listening = await untilWidgetHook(
    page,
    (h) => h.timeline.some((e: any) => e.kind === 'state' && e.value === 'listening'),
    'listening',
    { timeoutMs: 40_000 },
  );
  const sessionId = listening.session?.sessionId as string;
  const sent: Buffer[] = [];
  const said: string[] = [];
  const heardWords: string[] = [];
  live(app, sessionId).subscribe({
    onOutputAudio: (pcm) => void sent.push(Buffer.from(pcm)),
    onOutputTranscript: (d) => void said.push(d.text),
    onInputTranscript: (d) => void heardWords.push(d.text),
  });
  await waitFor(() => said.join(' ').endsWith('notebooks.'), 'the spoken answer', 40_000);
  t.match(said.join(' '), /4\.99 euros per month/, 'the answer quotes the document');
  const asked = heardWords.join(' ');
  t.match(asked, /premium|plan|cost/, `the caller's words, as heard ("${asked}")`);
  const page_ = await untilWidgetHook(page, (h) => h.audibleSamples > 0, 'the answer played in the page', {
    timeoutMs: 40_000,
  });
  t.ok(page_.maxOutputRms > 0.01, 'the answer was audible in the page');

  const model = await prepareSessionModel(DOCUMENT, await loadPronunciations(engines.dictionary));
  t.teardown(() => model.dispose());
  const audio = { format: 'pcm16', sampleRateHz: 24000 } as const;
  const words = await recognizeUtterance(wavSamples(callAudioToWav(Buffer.concat(sent), audio)), {
    engines,
    model,
    signal: new AbortController().signal,
  });
  const heard = words.map((w) => w.word).join(' ');
  t.match(heard, /euros|month|premium/, `the audio Parley sent says it ("${heard}")`);

  await page.getByRole('button', { name: 'End call' }).click();
  await waitFor(() => !app.app.voice.sessions.has(sessionId), 'the session ended at the service');
  const [conv] = await app.database.sql`select conversation_id from voice_sessions where id = ${sessionId}`;
  const messages = await app.database.sql<Array<{ role: string; content: string }>>`
    select role, content from messages where conversation_id = ${conv!.conversationId} order by created_at, id`;
  t.equal(messages[0]?.role, 'user');
  t.match(messages[0]?.content, /premium|plan|cost/, 'the stored question is what was heard');
  // The local voice takes relayed calls only: no WebRTC attempt reached a provider (no 502, no warning).
  t.notMatch(app.logs.text(), /provider session not confirmed/, 'no failed provider start');
  const failed = await app.database.sql`select failure_code from voice_sessions where state = 'failed'`;
  t.same(failed, [], 'no failed mint recorded');
});
