import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { startToolReceiver } from '../../examples/tool-receiver.js';
import { toolReceiver, verifyToolCall, WebhookVerificationError } from '../../sdk/src/index.js';
import { newEndpointSecret, signatureHeader } from '../../src/webhooks/index.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { api, orderStatusTool } from './helpers.js';

const call = {
  type: 'tool.call',
  toolCallId: 'tcall_abc',
  tool: 'order_status',
  arguments: { orderId: '12345' },
  call: { conversationId: 'conv_x', assistantId: 'a', source: 'api' },
  messages: [],
};

t.test('verifyToolCall and toolReceiver: signed calls in, the rest refused', async (t) => {
  const secret = newEndpointSecret();
  const body = JSON.stringify(call);
  const now = new Date();
  const headers = {
    'webhook-id': 'tcall_abc',
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign('tcall_abc', now, body),
  };
  t.match(await verifyToolCall(secret, headers, body), { tool: 'order_status', arguments: { orderId: '12345' } });
  await t.rejects(verifyToolCall(newEndpointSecret(), headers, body), WebhookVerificationError);
  const notACall = JSON.stringify({ type: 'webhook.test' });
  const signed = { ...headers, 'webhook-signature': new Webhook(secret).sign('tcall_abc', now, notACall) };
  await t.rejects(
    verifyToolCall(secret, signed, notACall),
    WebhookVerificationError,
    'a webhook event is no tool call',
  );

  const receive = toolReceiver(secret, { order_status: (args) => ({ got: args['orderId'] }) });
  t.same(await receive(headers, body), { status: 200, body: { result: { got: '12345' } } });
  t.same((await receive({ ...headers, 'webhook-signature': 'v1,AAAA' }, body)).status, 401);
  const other = JSON.stringify({ ...call, tool: 'toString' });
  const otherHeaders = {
    ...headers,
    'webhook-signature': signatureHeader([secret], 'tcall_abc', Number(headers['webhook-timestamp']), other),
  };
  t.same(await receive(otherHeaders, other), { status: 404, body: { error: 'no tool named toString' } });
});

t.test('examples/tool-receiver.ts answers a real assistant; after a rotation both secrets verify', async (t) => {
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CHAT_PROVIDER: 'local' } });
  const owner = await createOwner(app.database.sql);
  const { body } = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Shop' });
  const base = `/api/v1/assistants/${body.assistant.id}/tools`;
  // The first tool makes the secret; the example receiver starts with it, at a URL the tool then points to.
  const created = await api(app.url, 'POST', base, owner.secret, orderStatusTool('http://127.0.0.1:9/tools'));
  const oldSecret: string = created.body.secret;
  const old = await startToolReceiver(oldSecret, { port: 0 });
  t.teardown(() => new Promise<void>((resolve) => old.server.close(() => resolve())));
  await api(app.url, 'PATCH', `${base}/${created.body.tool.id}`, owner.secret, { url: old.url });
  const ask = async (message: string) =>
    (await api(app.url, 'POST', '/api/v1/chat', owner.secret, { assistantId: body.assistant.id, message })).body;

  t.match((await ask('what is the status of order 12345')).answer, /Order status: status shipped, eta 2026-12-01\./);
  t.match(
    (await ask('status of order 4')).answer,
    /I could not reach the order system\./,
    "an { error } answer: the tool's failed message",
  );

  const rotated = await api(app.url, 'POST', `${base}/rotate-secret`, owner.secret, {});
  const fresh = await startToolReceiver(rotated.body.secret, { port: 0 });
  t.teardown(() => new Promise<void>((resolve) => fresh.server.close(() => resolve())));
  t.match((await ask('status of order 67890')).answer, /processing/, 'the old secret still verifies');
  await api(app.url, 'PATCH', `${base}/${created.body.tool.id}`, owner.secret, { url: fresh.url });
  t.match((await ask('status of order 67890')).answer, /processing/, 'and so does the new one');
});
