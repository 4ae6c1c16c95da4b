import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, signInToDashboard } from '../helpers/browser.js';
import { createOwner } from '../helpers/identity.js';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';
import { api, eventually } from '../webhooks/helpers.js';
import { ANALYSIS, analysisRows } from './helpers.js';

t.test(
  'the dashboard: the analysis above the transcript, list filters by it, the analysis settings form saves',
  async (t) => {
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
    await signInToDashboard(page, app.url, owner);
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

    // The list filters by the analysis and shows its verdict.
    await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistantId)}/conversations`);
    const filters = page.getByRole('search', { name: 'Conversation filters' });
    await filters.getByLabel('Success').selectOption('fail');
    await filters.getByLabel('Field', { exact: true }).fill('orderNumber');
    await filters.getByLabel('Field value').fill('48213');
    await filters.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('cell', { name: /Failed/ }).waitFor();
    await filters.getByLabel('Success').selectOption('pass');
    await filters.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No conversation matches these filters.').waitFor();

    // The analysis settings form: a field added, the rubric changed, saved with PATCH.
    await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistantId)}`);
    const form = page.getByRole('form', { name: 'Analysis settings' });
    await form.getByLabel('Field 1 name').waitFor();
    t.equal(await form.getByLabel('Field 4 name').inputValue(), 'callbackRequested', 'the stored schema is shown');
    await form.getByRole('button', { name: 'Add field' }).click();
    await form.getByLabel('Field 5 name').fill('tier');
    await form.getByLabel('Field 5 type').selectOption('enum');
    await form.getByLabel('Field 5 values').fill('gold, silver');
    await form.getByLabel('Field 5 required').check();
    await form.getByLabel('Success rubric').selectOption('score_1_10');
    await form.getByLabel('Sentiment').uncheck();
    await form.getByLabel('Analyse voice calls').uncheck();
    await form.getByLabel('A chat ends after (idle minutes)').fill('5');
    await form.getByRole('button', { name: 'Save analysis settings' }).click();
    await form.getByText('Analysis settings saved.').waitFor();
    const stored = await api(app.url, 'GET', `/api/v1/assistants/${assistantId}`, owner.secret);
    t.match(stored.body.assistant.settings.analysis, {
      summary: true,
      sentiment: false,
      successEvaluation: { rubric: 'score_1_10' },
      for: ['chat'],
      chatIdleMinutes: 5,
      structuredData: {
        schema: {
          properties: { orderNumber: { type: 'integer' }, tier: { enum: ['gold', 'silver'] } },
          required: ['orderNumber', 'tier'],
        },
      },
    });
    t.same(browser.errors.slice(errorsBefore), [], 'no console errors');
    // A field the server refuses is shown with its reason, and nothing is stored.
    await form.getByLabel('Field 5 name').fill('bad name');
    await form.getByRole('button', { name: 'Save analysis settings' }).click();
    await form.getByText('Could not save the analysis settings').waitFor();
    const unchanged = await api(app.url, 'GET', `/api/v1/assistants/${assistantId}`, owner.secret);
    t.ok('tier' in unchanged.body.assistant.settings.analysis.structuredData.schema.properties, 'nothing stored');
  },
);
