/**
 * The dashboard's Tests tab, in Debian's Chromium: the owner writes a scenario (JSON), a malformed one is refused
 * naming the field, runs them, and sees the verdict with its evidence, the transcript and the run in the history.
 */
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, signInToDashboard } from '../helpers/browser.js';
import { createOwner } from '../helpers/identity.js';
import { addReadyTextDocument } from '../providers/voice/local-helpers.js';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';
import { api, DOCUMENT } from './helpers.js';

await ensureDashboardBuilt();

t.test('write a scenario, run it, read the verdict with its evidence and the transcript', async (t) => {
  const app = await startTestApp(t, { env: { CHAT_PROVIDER: 'local' } });
  const owner = await createOwner(app.database.sql);
  const made = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Notes' });
  const assistant = made.body.assistant;
  t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  await signInToDashboard(page, app.url, owner);
  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/tests`);
  await page.getByRole('heading', { name: 'Tests' }).waitFor();
  await page.getByText('No scenarios yet: write one below.').waitFor();

  const editor = page.getByLabel(/New scenario/);
  await editor.fill(JSON.stringify({ name: 'bad', transport: 'chat', turns: [], expect: [{ mustSay: 'x' }] }));
  await page.getByRole('button', { name: 'Save scenario' }).click();
  await page.getByText('Could not save the scenario').waitFor();
  t.match(await page.locator('.error, [role=alert]').first().textContent(), /turns/, 'the refusal names the field');

  await editor.fill(
    JSON.stringify({
      name: 'price',
      transport: 'chat',
      turns: [{ say: 'How much does the premium plan cost?' }],
      expect: [{ mustSay: '4.99 euros' }],
    }),
  );
  await page.getByRole('button', { name: 'Save scenario' }).click();
  await page.getByRole('row', { name: /price chat 1 mustSay/ }).waitFor();

  await page.getByRole('button', { name: 'Run all scenarios' }).click();
  await page.getByText(/1 of 1 scenarios · pass rate 100 %/).waitFor();
  await page.getByText('price (chat)').click();
  await page.getByRole('cell', { name: /said "4\.99 euros" in:/ }).waitFor();
  t.match(
    await page.locator('ol.transcript').textContent(),
    /caller: How much does the premium plan cost\?.*assistant: .*4\.99 euros per month/s,
    'the transcript is shown',
  );
  t.match(
    await page.getByRole('link', { name: 'Open the conversation' }).getAttribute('href'),
    /\/dashboard\/assistants\/.+\/conversations\/conv_/,
    'the result links to its conversation (timeline, recording)',
  );
  await page
    .getByRole('row', { name: /price chat 1 mustSay/ })
    .getByRole('button', { name: 'History' })
    .click();
  await page
    .getByRole('table', { name: 'History of price' })
    .getByRole('row', { name: /passed/ })
    .waitFor();
  await page
    .getByRole('table', { name: 'Runs' })
    .getByRole('row', { name: /done 1 100 %/ })
    .waitFor();
});
