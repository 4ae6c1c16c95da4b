/**
 * "Talk to it" on the assistant page, in Debian's Chromium with a fake microphone saying a question: the owner opens
 * the call panel from the top of the assistant page, starts a call, watches the widget's microphone level bar move,
 * the transcript grow as it is spoken and the turn latency appear as the answer starts.
 */
import t from 'tap';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, makeSpeechWav, signInToDashboard } from '../helpers/browser.js';
import { ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';

await ensureDashboardBuilt();
await buildWidget();

t.test('Talk to it: a live transcript, the turn latency and the microphone level', async (t) => {
  const app = await startTestApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const wav = await makeSpeechWav(t, 'Hello there. When are you open tomorrow?');
  const browser = await launchBrowser(t, { fakeAudioWav: wav });
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await signInToDashboard(page, app.url, owner);

  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.publicId)}`);
  await page.getByRole('button', { name: 'Talk to it' }).click();
  await page.getByRole('button', { name: 'Start voice call' }).click();

  const meter = page.locator('parley-assistant meter.level');
  const levels: number[] = [];
  await waitFor(
    async () => {
      levels.push(Number(await meter.getAttribute('value')));
      return levels.some((v) => v > 0) ? true : undefined;
    },
    'the microphone level bar to move',
    20_000,
  );
  t.ok(await meter.isVisible(), 'the level bar shows during the call');
  t.ok(Math.max(...levels) > 0 && Math.max(...levels) <= 1, `the level moves within 0-1 (max ${Math.max(...levels)})`);

  const transcript = page.getByRole('list', { name: 'Live transcript' });
  await waitFor(
    async () => ((await transcript.innerText()).includes('Assistant:') ? true : undefined),
    "the assistant's words in the live transcript",
    30_000,
  );
  t.match(await transcript.innerText(), /You:/, "the caller's words too");
  const latency = page.getByRole('status', { name: 'Turn latency' });
  await waitFor(
    async () => (/last \d+ ms/.test(await latency.innerText()) ? true : undefined),
    'the turn latency',
    20_000,
  );
  t.match(await latency.innerText(), /median \d+ ms over \d+ turns?/);

  await page.getByRole('button', { name: 'End call' }).click();
  await waitFor(async () => ((await meter.getAttribute('value')) === '0' ? true : undefined), 'the bar back at 0');
  t.same(
    browser.errors.filter((e) => !/status of 401/.test(e)),
    [],
    'no page errors',
  );
});
