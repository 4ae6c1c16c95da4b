import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { verifyToolCall, WebhookVerificationError } from '../../sdk/src/index.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { parseSse } from '../chat/helpers.js';
import { api, orderStatusTool, startToolReceiver } from './helpers.js';

/** The local answer engine (no model) calls a tool when a question matches one of its examples. */
t.test('offline: "what is the status of order 12345" makes one signed call and states its result', async (t) => {
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CHAT_PROVIDER: 'local' } });
  const receiver = await startToolReceiver(t);
  const owner = await createOwner(app.database.sql);
  const { body } = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Shop' });
  const assistantId: string = body.assistant.id;
  const created = await api(
    app.url,
    'POST',
    `/api/v1/assistants/${assistantId}/tools`,
    owner.secret,
    orderStatusTool(receiver.url),
  );
  const secret: string = created.body.secret;

  const chat = (message: string, extra: Record<string, unknown> = {}) =>
    api(app.url, 'POST', '/api/v1/chat', owner.secret, { assistantId, message, ...extra });

  const answered = await chat('What is the status of order 12345?');
  t.equal(answered.status, 200, answered.text);
  t.equal(receiver.received.length, 1, 'the receiver got one call');
  const hook = receiver.received[0]!;
  t.match(hook.json, {
    type: 'tool.call',
    toolCallId: /^tcall_/,
    tool: 'order_status',
    arguments: { orderId: '12345' },
    call: { conversationId: answered.body.conversationId, assistantId, source: 'api' },
    messages: [{ role: 'user', content: 'What is the status of order 12345?' }],
  });
  t.equal(hook.headers['webhook-id'], hook.json.toolCallId, 'webhook-id is the tool call id');
  const headers = {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  };
  t.match(new Webhook(secret).verify(hook.body, headers), { tool: 'order_status' }, 'the reference library verifies');
  t.match(
    await verifyToolCall(secret, hook.headers, hook.body),
    { arguments: { orderId: '12345' } },
    'so does the SDK',
  );
  await t.rejects(verifyToolCall(secret, hook.headers, hook.body.replace('12345', '12346')), WebhookVerificationError);
  t.match(answered.body.answer, /Order status: status shipped, eta 2026-12-01\./, 'the answer states the result');
  t.notMatch(answered.body.answer, /[{}"]/, 'in words, not JSON');
  t.equal(answered.body.outcome, 'answered');

  const conversation = await api(app.url, 'GET', `/api/v1/conversations/${answered.body.conversationId}`, owner.secret);
  t.equal(conversation.status, 200, conversation.text);
  const [item] = conversation.body.toolCalls;
  t.match(item, {
    id: hook.json.toolCallId,
    role: 'tool',
    name: 'order_status',
    arguments: { orderId: '12345' },
    status: 'succeeded',
    result: { status: 'shipped', eta: '2026-12-01' },
    error: null,
    durationMs: Number,
    inReplyTo: conversation.body.messages[0].id,
  });

  // A question meaning the tool without the value: the engine asks, and the next message fills it.
  const asked = await chat("What's the status of my order?");
  t.equal(receiver.received.length, 1, 'nothing is called without the required value');
  t.match(asked.body.answer, /I need the order id \(The order number\)\. What is it\?/);
  const filled = await chat('A-778', { conversationId: asked.body.conversationId });
  t.equal(receiver.received.length, 2, 'the reply makes the call');
  t.same(receiver.received[1]!.json.arguments, { orderId: 'A-778' });
  t.match(filled.body.answer, /Order status: status shipped/);

  // SSE: tool events (with the owner's start message) before the answer's tokens.
  const res = await fetch(`${app.url}/api/v1/chat`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${owner.secret}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    },
    body: JSON.stringify({ assistantId, message: 'where is order 555' }),
  });
  const events = parseSse(await res.text());
  const tools = events.filter((e) => e.event === 'tool').map((e) => e.data as Record<string, unknown>);
  t.match(tools, [
    { name: 'order_status', status: 'started', message: 'Checking your order...', toolCallId: /^tcall_/ },
    { name: 'order_status', status: 'succeeded' },
  ]);
  const firstToken = events.findIndex((e) => e.event === 'token');
  t.ok(firstToken > events.findIndex((e) => e.event === 'tool'), 'the tool events come first');
  t.equal(events.at(-1)?.event, 'done');

  // A failing receiver: the answer says so in the owner's words; the item records why.
  receiver.respond = (_req, r) => {
    r.writeHead(500);
    r.end('boom');
  };
  const failed = await chat('status of order 999');
  t.equal(receiver.received.length, 4, 'a sync call is never retried');
  t.match(failed.body.answer, /I could not reach the order system\./);
  const after = await api(app.url, 'GET', `/api/v1/conversations/${failed.body.conversationId}`, owner.secret);
  t.match(after.body.toolCalls[0], { status: 'failed', error: 'the tool answered HTTP 500', result: null });
  t.notOk(app.logs.text().includes(secret.slice(6)), 'the secret is never logged');
});
