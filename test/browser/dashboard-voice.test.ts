/**
 * Playground voice in the dashboard, in Debian's Chromium: the owner signs in, opens an assistant's Playground and
 * talks to it through <parley-assistant source="playground"> (same origin, the session cookie, under the dashboard's
 * CSP) with the fake microphone; the call reaches listening, the assistant's spoken answer is heard, the call ends,
 * and its seconds show as playground voice on the Usage page (not as voice minutes); the transcript shows the call
 * with its duration and end reason. The assistant's allowed domains
 * do not include the dashboard: the owner needs none.
 */
import t from 'tap';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, makeSpeechWav, untilWidgetHook, signInToDashboard } from '../helpers/browser.js';
import { balanceOf } from '../helpers/metering.js';
import { ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';
import { ensureDashboardBuilt } from './dashboard-build.js';

await ensureDashboardBuilt();
await buildWidget();
const app = await startTestApp(t);
const owner = await ownerWithVoice(app);
const assistant = await voiceAssistant(app, owner);
const wav = await makeSpeechWav(t, 'Hello there. When are you open tomorrow?');
const browser = await launchBrowser(t, { fakeAudioWav: wav });
const page = await browser.newPage();
page.setDefaultTimeout(20_000);

t.test('a playground voice call through the widget, metered as playground seconds', async (t) => {
  await signInToDashboard(page, app.url, owner);
  const errorsBefore = browser.errors.length; // the sign-in page's own "who am I?" is a 401 by design
  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/playground`);
  const start = page.getByRole('button', { name: 'Start voice call' });
  await start.waitFor();
  t.equal(await page.locator('parley-assistant').getAttribute('source'), 'playground');

  // The browser tests read the widget's test hook, which exists only with data-test: add it and re-attach the element.
  await page.evaluate(
    `(() => { const el = document.querySelector('parley-assistant'); el.setAttribute('data-test', ''); el.parentNode.append(el); })()`,
  );
  await start.click();
  const listening = await untilWidgetHook(
    page,
    (h) => h.timeline.some((e: any) => e.kind === 'state' && e.value === 'listening'),
    'listening',
    { errors: browser.errors },
  );
  const sessionId = listening.session?.sessionId as string;
  t.match(sessionId, /^vs_/, 'a voice session was minted');
  const [row] = await app.database.sql`select source, account_id from voice_sessions where id = ${sessionId}`;
  t.match(row, { source: 'playground', accountId: owner.accountId }, 'as the signed-in owner, source playground');

  const heard = await untilWidgetHook(
    page,
    (h) =>
      h.audibleSamples >= 3 && h.timeline.some((e: any) => e.kind === 'caption' && e.value.startsWith('assistant:')),
    'the spoken answer',
    { errors: browser.errors },
  );
  t.ok(heard.maxOutputRms > 0.01, `the assistant's answer was heard (max RMS ${heard.maxOutputRms.toFixed(3)})`);

  await page.getByRole('button', { name: 'End call' }).click();
  await page.getByText('Its seconds count as playground voice').waitFor();
  await waitFor(() => !app.app.voice.sessions.has(sessionId), 'the session ended at the service');
  const [ended] = await app.database.sql`select state, billable_seconds from voice_sessions where id = ${sessionId}`;
  t.equal(ended!.state, 'ended');
  const balance = (await balanceOf(app.database.sql, owner.accountId))!;
  t.ok(balance.playgroundVoiceSeconds >= 1, `playground seconds counted (${balance.playgroundVoiceSeconds})`);
  t.equal(balance.playgroundVoiceSeconds, ended!.billableSeconds, "exactly the call's billable seconds");
  t.equal(balance.voiceSecondsUsed, 0, 'not counted toward the voice minutes');

  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('heading', { name: /Current period/ }).waitFor();
  const stats = await page.locator('dl.stats').innerText();
  t.match(
    stats,
    new RegExp(`Playground voice minutes\\s+[0-9.]+ \\(${balance.playgroundVoiceSeconds} s\\)`),
    'the Usage page shows the playground seconds',
  );
  t.match(stats, /Voice minutes used\s+0 \/ no cap/, 'and no voice minutes used (a self-hosted server: no cap)');

  // The call's conversation: the transcript shows the call with its duration, what was billed and why it ended.
  const [conv] = await app.database.sql`select conversation_id from voice_sessions where id = ${sessionId}`;
  await page.goto(
    `${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/conversations/${encodeURIComponent(conv!.conversationId)}`,
  );
  const call = page.getByRole('group', { name: 'Voice call 1' });
  await call.waitFor();
  const shown = await call.innerText();
  t.match(shown, sessionId, 'the transcript lists the call');
  t.match(
    shown,
    new RegExp(`Duration \\d+ s · billed ${ended!.billableSeconds} s · the caller hung up`),
    'with its duration, billed seconds and end reason',
  );
  t.same(browser.errors.slice(errorsBefore), [], 'no console errors or uncaught exceptions once signed in');
});
