import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { createOwner } from '../helpers/identity.js';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';
import { api, eventually } from '../webhooks/helpers.js';
import { ANALYSIS, analysisRows } from './helpers.js';

t.test('the conversation page shows the summary, the verdict and the fields above the transcript', async (t) => {
  await ensureDashboardBuilt();
  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql);
  const created = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, {
    name: 'Orders',
    settings: { analysis: ANALYSIS },
  });
  const assistantId = created.body.assistant.id as string;
  const chat = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
    assistantId,
    message: 'Where is order number 48213? Please call me back.',
  });
  const conversationId = chat.body.conversationId as string;
  t.equal((await api(app.url, 'POST', `/api/v1/conversations/${conversationId}/analysis`, owner.secret)).status, 202);
  await eventually(
    async () => (await analysisRows(app.database.sql, conversationId))[0]?.status === 'done',
    'analysed',
  );

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${app.url}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Assistants' }).waitFor();
  const errorsBefore = browser.errors.length;
  await page.goto(
    `${app.url}/dashboard/assistants/${encodeURIComponent(assistantId)}/conversations/${encodeURIComponent(conversationId)}`,
  );
  const panel = page.getByRole('group', { name: 'Analysis' });
  await panel.waitFor();
  const shown = await panel.innerText();
  t.match(shown, /Offline analysis: quotes, patterns and word lists, no language model\./, 'the engine, honestly');
  t.match(shown, /The caller asked: "Where is order number 48213\? Please call me back\."/, 'the summary');
  t.match(shown, /Verdict\s+Did not succeed/, 'the verdict');
  t.match(shown, /orderNumber\s+48213/, 'the fields');
  t.match(shown, /callbackRequested\s+yes/);
  const above = await page.evaluate(
    `(() => { const a = document.querySelector('.analysis'); const tr = document.querySelector('ol.transcript');
      return a !== null && tr !== null && (a.compareDocumentPosition(tr) & 4) !== 0; })()`,
  );
  t.ok(above, 'above the transcript');
  t.same(browser.errors.slice(errorsBefore), [], 'no console errors');
});
