import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { createAssistant } from '../../src/assistants/index.js';
import { allowAlso } from '../../src/documents/index.js';
import { createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { api, eventually, startReceiver, startWebhookApp } from './helpers.js';

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
