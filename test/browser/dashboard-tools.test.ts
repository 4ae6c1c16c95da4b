/**
 * The assistant's Tools tab in Chromium: the owner adds an order_status tool (its signing secret shown once), the
 * assistant calls it in chat, the tab counts the call, and the owner deletes it.
 */
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, signInToDashboard } from '../helpers/browser.js';
import { api, startToolReceiver } from '../tools/helpers.js';
import { ownerWithVoice, voiceAssistant } from '../voice/helpers.js';
import { ensureDashboardBuilt } from './dashboard-build.js';

await ensureDashboardBuilt();

t.test('add a tool, see its secret once and its calls, delete it', async (t) => {
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CHAT_PROVIDER: 'local' } });
  const receiver = await startToolReceiver(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await signInToDashboard(page, app.url, owner);
  const tab = `${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/tools`;
  await page.goto(tab);
  await page.getByText('No tools yet.').waitFor();

  const form = page.getByRole('form', { name: 'Add a tool' });
  await form.getByLabel('Name (snake_case)').fill('order_status');
  await form.getByLabel('Description').fill('Looks up the status of an order by its number.');
  await form.getByLabel('URL').fill(receiver.url);
  await form
    .getByLabel('Parameters (JSON Schema)')
    .fill('{"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}');
  await form.getByLabel('Start message').fill('Checking your order...');
  await form.getByLabel('Examples (one per line, with {slots})').fill('status of order {orderId}');
  await form.getByRole('button', { name: 'Add tool' }).click();
  const secret = await page.getByLabel('Tool signing secret').textContent();
  t.match(secret, /^whsec_/, 'the signing secret is shown once');
  await page.getByRole('cell', { name: 'order_status', exact: true }).waitFor();

  const chat = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
    assistantId: assistant.publicId,
    message: 'What is the status of order 12345?',
  });
  t.equal(chat.status, 200, chat.text);
  t.equal(receiver.received.length, 1, 'the assistant called the tool');
  await page.reload();
  const row = page.getByRole('row').filter({ hasText: 'order_status' });
  await row.getByRole('cell', { name: '1', exact: true }).first().waitFor();
  t.notOk(await page.getByLabel('Tool signing secret').isVisible(), 'the secret is not shown again');

  await row.getByRole('button', { name: 'Delete order_status' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByText('No tools yet.').waitFor();
});
