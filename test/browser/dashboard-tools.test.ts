/**
 * The assistant's Tools tab in Chromium: the owner adds an order_status tool (its signing secret shown once), the
 * assistant calls it in chat, the tab counts the call, and the owner deletes it; edits one and sends it a test call;
 * and a conversation's transcript shows its tool calls.
 */
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, signInToDashboard } from '../helpers/browser.js';
import { api, orderStatusTool, startToolReceiver } from '../tools/helpers.js';
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

t.test('the transcript shows each tool call where it happened: arguments, result or error, time', async (t) => {
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CHAT_PROVIDER: 'local' } });
  const receiver = await startToolReceiver(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const created = await api(
    app.url,
    'POST',
    `/api/v1/assistants/${assistant.publicId}/tools`,
    owner.secret,
    orderStatusTool(receiver.url),
  );
  t.equal(created.status, 201, created.text);
  const first = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
    assistantId: assistant.publicId,
    message: 'What is the status of order 12345?',
  });
  t.equal(first.status, 200, first.text);
  receiver.respond = (_req, res) => {
    res.writeHead(500);
    res.end('boom');
  };
  const second = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
    assistantId: assistant.publicId,
    conversationId: first.body.conversationId,
    message: 'And where is order 777?',
  });
  t.equal(second.status, 200, second.text);
  t.equal(receiver.received.length, 2);

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await signInToDashboard(page, app.url, owner);
  await page.goto(
    `${app.url}/dashboard/assistants/${encodeURIComponent(assistant.publicId)}/conversations/${encodeURIComponent(first.body.conversationId)}`,
  );
  const items = page.locator('ol.transcript > li');
  await items.nth(5).waitFor();
  const texts = await items.allInnerTexts();
  t.equal(texts.length, 6, 'two questions, two tool calls, two answers');
  t.match(texts[0], /Visitor[\s\S]*status of order 12345/);
  t.match(texts[1], /Tool: order_status/, 'the call comes right after the question it answers');
  t.match(texts[1], /Arguments: \{"orderId":"12345"\}/);
  t.match(texts[1], /Result: \{"eta":"2026-12-01","status":"shipped"\}/);
  t.match(texts[1], /Succeeded · took \d+ ms/);
  t.match(texts[2], /Assistant[\s\S]*Order status: status shipped/);
  t.match(texts[3], /Visitor[\s\S]*where is order 777/);
  t.match(texts[4], /Tool: order_status/);
  t.match(texts[4], /Arguments: \{"orderId":"777"\}/);
  t.match(texts[4], /Error: the tool answered HTTP 500/);
  t.match(texts[4], /Failed · took \d+ ms/);
  t.notMatch(texts[4], /Result:/, 'a failed call shows its error, no result');
  t.match(texts[5], /Assistant[\s\S]*I could not reach the order system/);
  await page.getByRole('listitem', { name: 'Tool call order_status' }).first().waitFor();
});

t.test('edit a tool, then test it: the sample call reaches the server and its answer or error is shown', async (t) => {
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CHAT_PROVIDER: 'local' } });
  const receiver = await startToolReceiver(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const base = `/api/v1/assistants/${assistant.publicId}/tools`;
  const created = await api(app.url, 'POST', base, owner.secret, orderStatusTool(receiver.url));
  t.equal(created.status, 201, created.text);
  const secret: string = created.body.secret;
  const toolId: string = created.body.tool.id;

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await signInToDashboard(page, app.url, owner);
  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/tools`);
  await page.getByRole('button', { name: 'Edit order_status' }).click();
  const edit = page.getByRole('form', { name: 'Edit order_status' });
  t.equal(await edit.getByLabel('Start message').inputValue(), 'Checking your order...', 'the form holds the tool');
  await edit.getByLabel('Start message').fill('Looking it up...');
  await edit.getByLabel('Timeout (ms)').fill('5000');
  await edit.getByLabel('Examples (one per line, with {slots})').fill('status of order {orderId}\norder {orderId}');
  await edit.getByRole('button', { name: 'Save tool' }).click();
  await edit.waitFor({ state: 'detached' });
  const saved = await api(app.url, 'GET', `${base}/${toolId}`, owner.secret);
  t.match(saved.body.tool, {
    name: 'order_status',
    timeoutMs: 5000,
    messages: { start: 'Looking it up...', failed: 'I could not reach the order system.' },
    examples: ['status of order {orderId}', 'order {orderId}'],
    url: receiver.url,
  });

  await page.getByRole('button', { name: 'Test order_status' }).click();
  const test = page.getByRole('form', { name: 'Test order_status' });
  t.same(JSON.parse(await test.getByLabel('Arguments (JSON)').inputValue()), { orderId: '' }, 'a sample to fill in');
  await test.getByLabel('Arguments (JSON)').fill('{"orderId": "12345"}');
  await test.getByRole('button', { name: 'Send test call' }).click();
  const answer = test.getByRole('status', { name: 'Test answer' });
  await answer.getByText(/Succeeded in \d+ ms/).waitFor();
  t.match(await answer.textContent(), /Result: \{"status":"shipped","eta":"2026-12-01"\}/, 'the server answer');
  t.equal(receiver.received.length, 1, 'one request');
  const hook = receiver.received[0]!;
  t.match(hook.json, { tool: 'order_status', arguments: { orderId: '12345' }, call: { source: 'test' } });
  const headers = {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  };
  t.match(new Webhook(secret).verify(hook.body, headers), { tool: 'order_status' }, 'signed as a real call');

  receiver.respond = (_req, res) => {
    res.writeHead(500);
    res.end('boom');
  };
  await test.getByRole('button', { name: 'Send test call' }).click();
  await answer.getByText(/Failed in \d+ ms: the tool answered HTTP 500/).waitFor();
  t.equal(receiver.received.length, 2);

  await test.getByLabel('Arguments (JSON)').fill('{"orderId": 5}');
  await test.getByRole('button', { name: 'Send test call' }).click();
  const refused = test.getByRole('alert');
  await refused.getByText(/arguments\.orderId/).waitFor();
  t.equal(receiver.received.length, 2, 'invalid arguments are not sent');
});
