import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { api, orderStatusTool, startToolReceiver } from './helpers.js';

/**
 * POST /api/v1/assistants/{assistantId}/tools/{toolId}/test: the owner sends one sample call to a real receiver and
 * reads what it answered; nothing of it is stored as a conversation's tool call.
 */
t.test("a tool's test call: signed like a real one, the answer or the error, arguments checked first", async (t) => {
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startToolReceiver(t);
  const owner = await createOwner(app.database.sql);
  const other = await createOwner(app.database.sql);
  const made = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Shop' });
  const assistant = made.body.assistant;
  const created = await api(
    app.url,
    'POST',
    `/api/v1/assistants/${assistant.publicId}/tools`,
    owner.secret,
    orderStatusTool(receiver.url),
  );
  t.equal(created.status, 201, created.text);
  const secret: string = created.body.secret;
  const path = `/api/v1/assistants/${assistant.publicId}/tools/${created.body.tool.id}/test`;

  const ok = await api(app.url, 'POST', path, owner.secret, { arguments: { orderId: '12345' } });
  t.equal(ok.status, 200, ok.text);
  t.match(ok.body, {
    ok: true,
    status: 'succeeded',
    result: { status: 'shipped', eta: '2026-12-01' },
    ms: Number,
    toolCallId: /^tcall_/,
  });
  t.notOk('error' in ok.body);
  t.equal(receiver.received.length, 1, 'one request');
  const hook = receiver.received[0]!;
  t.match(hook.json, {
    type: 'tool.call',
    toolCallId: ok.body.toolCallId,
    tool: 'order_status',
    arguments: { orderId: '12345' },
    call: { conversationId: 'test', assistantId: assistant.id, source: 'test' },
    messages: [],
  });
  t.equal(hook.headers['webhook-id'], ok.body.toolCallId, 'webhook-id is the test call id');
  const headers = {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  };
  t.match(new Webhook(secret).verify(hook.body, headers), { tool: 'order_status' }, 'signed with the tool secret');

  receiver.respond = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'no such order' }));
  };
  const reported = await api(app.url, 'POST', path, owner.secret, { arguments: { orderId: '999' } });
  t.equal(reported.status, 200, 'a failing tool is an answer, not a failed request');
  t.match(reported.body, { ok: false, status: 'failed', error: 'the tool reported an error: no such order' });
  t.notOk('result' in reported.body);
  receiver.respond = (_req, res) => {
    res.writeHead(503);
    res.end('down');
  };
  const down = await api(app.url, 'POST', path, owner.secret, { arguments: { orderId: '999' } });
  t.match(down.body, { ok: false, status: 'failed', error: 'the tool answered HTTP 503', ms: Number });
  t.equal(receiver.received.length, 3, 'never retried');

  const invalid = await api(app.url, 'POST', path, owner.secret, { arguments: { orderId: 12345 } });
  t.equal(invalid.status, 400, invalid.text);
  t.match(invalid.body, { code: 'VALIDATION_FAILED', details: { issues: [{ path: 'body.arguments.orderId' }] } });
  const missing = await api(app.url, 'POST', path, owner.secret, { arguments: {} });
  t.equal(missing.status, 400);
  t.same(missing.body.details.issues, [{ path: 'body.arguments.orderId', message: 'is required' }]);
  t.equal(receiver.received.length, 3, 'invalid arguments never reach the receiver');

  const notYours = await api(app.url, 'POST', path, other.secret, { arguments: { orderId: '1' } });
  t.equal(notYours.status, 404, "another owner's tool cannot be tested");
  t.equal(receiver.received.length, 3);

  const stored = await app.database.sql`select count(*)::int as n from tool_calls where assistant_id = ${assistant.id}`;
  t.equal(stored[0]!.n, 0, 'a test call is not stored with any conversation');
});
