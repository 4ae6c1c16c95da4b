import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { createAssistant } from '../../src/assistants/index.js';
import { allowAlso } from '../../src/documents/index.js';
import { createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { api, eventually, startReceiver, startWebhookApp } from './helpers.js';
import { createTestMeter } from '../helpers/metering.js';

t.test('documents report document.processed and document.failed', async (t) => {
  const app = await startWebhookApp(t, {
    knowledge: { documents: { addressPolicy: allowAlso(['127.0.0.1']), pollMs: 50, backoffMs: () => 10 } },
  });
  const receiver = await startReceiver(t);
  // The receiver is also the URL source's web server: a page fetch (no webhook-id) is answered 404.
  receiver.answer = ({ headers }) => (headers['webhook-id'] === undefined ? 404 : 200);
  const owner = await createOwner(app.database.sql);
  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['document.processed', 'document.failed'],
  });
  const assistant = await createAssistant(app.database.sql, { accountId: owner.accountId }, { name: 'Docs' });
  const headers = dashboardHeaders(app.url, await login(app.url, owner.email, owner.password));
  const addSource = async (body: unknown) => {
    const res = await fetch(`${app.url}/api/assistants/${assistant.id}/sources`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    t.equal(res.status, 201, 'source added');
    return ((await res.json()) as { document: { id: string } }).document.id;
  };

  const processedId = await addSource({ type: 'text', name: 'Opening hours', text: 'We open at nine every day.' });
  const failedId = await addSource({ type: 'url', url: `${new URL(receiver.url).origin}/missing` });
  const hooks = () => receiver.received.filter((r) => r.headers['webhook-id'] !== undefined);
  await eventually(() => hooks().length === 2, 'two document events');
  const payloads = hooks().map(
    (hook) => new Webhook(created.body.secret).verify(hook.body, hook.headers as Record<string, string>) as any,
  );
  const processed = payloads.find((p) => p.type === 'document.processed');
  const failed = payloads.find((p) => p.type === 'document.failed');
  t.match(processed?.data, { documentId: processedId, assistantId: assistant.id, status: 'ready' });
  t.match(failed?.data, {
    documentId: failedId,
    assistantId: assistant.id,
    status: 'failed',
    errorCode: 'DOCUMENT_PROCESSING_FAILED',
    error: /404/,
  });
  t.notOk(app.logs.text().includes(created.body.secret.slice(6)), 'the secret is never logged');
});

t.test('a budget threshold crossing is delivered once as budget.threshold_crossed', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['budget.threshold_crossed'],
  });
  // 30% of the plan's budget spent: no threshold crossed yet.
  const { meter } = createTestMeter(app.database.sql);
  const r = await meter.admit({
    accountId: owner.accountId,
    kind: 'chat',
    source: 'api',
    audience: 'owner',
    estimateMicros: 300_000,
  });
  await meter.settle(r, { actualMicros: 300_000 });
  // A hard limit of 350,000 puts that spend over 50% and 80% at once (the crossing is recorded by the app's meter).
  const headers = dashboardHeaders(app.url, await login(app.url, owner.email, owner.password));
  const put = await fetch(`${app.url}/api/v1/account/budget`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ hardLimitMicros: 350_000 }),
  });
  t.equal(put.status, 200);
  await eventually(() => receiver.received.length >= 2, 'two threshold events');
  const payloads = receiver.received.map(
    (hook) => new Webhook(created.body.secret).verify(hook.body, hook.headers as Record<string, string>) as any,
  );
  t.same(payloads.map((p) => p.type).sort(), ['budget.threshold_crossed', 'budget.threshold_crossed']);
  t.same(payloads.map((p) => p.data.thresholdPercent).sort(), [50, 80]);
  t.match(payloads[0].data, { spentMicros: 300_000, budgetMicros: 350_000, periodStart: String, periodEnd: String });
  t.notOk('accountId' in payloads[0].data, 'the payload names no account id (the endpoint belongs to one)');
  // Saving the same limit again fires nothing more.
  await fetch(`${app.url}/api/v1/account/budget`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ hardLimitMicros: 350_000 }),
  });
  const again = await fetch(`${app.url}/api/v1/webhook-endpoints/${created.body.id}/deliveries`, {
    headers: { authorization: `Bearer ${owner.secret}` },
  });
  t.equal(
    ((await again.json()) as { deliveries: unknown[] }).deliveries.length,
    2,
    'still exactly one delivery per threshold',
  );
});
