import t from 'tap';
import { createOwner } from '../helpers/identity.js';
import { api as toolApi, orderStatusTool, startToolReceiver } from '../tools/helpers.js';
import { api, eventually, startReceiver, startWebhookApp } from '../webhooks/helpers.js';
import { ANALYSIS, backdate, startFastWorker, verifiedPayloads } from './helpers.js';

/** The end-of-call report hands the owner's systems the tool calls the assistant made, with what each answered. */
t.test("the report carries the conversation's tool calls", async (t) => {
  const app = await startWebhookApp(t, { env: { CHAT_PROVIDER: 'local' } });
  const receiver = await startReceiver(t);
  const tools = await startToolReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['conversation.analyzed'],
  });
  t.equal(endpoint.status, 201, endpoint.text);
  const created = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Orders' });
  const assistantId = created.body.assistant.id;
  const tool = await toolApi(
    app.url,
    'POST',
    `/api/v1/assistants/${assistantId}/tools`,
    owner.secret,
    orderStatusTool(tools.url),
  );
  t.equal(tool.status, 201, tool.text);
  const patched = await api(app.url, 'PATCH', `/api/v1/assistants/${assistantId}`, owner.secret, {
    settings: { analysis: { ...ANALYSIS, chatIdleMinutes: 5 } },
  });
  t.equal(patched.status, 200, patched.text);

  const chat = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
    assistantId,
    message: 'What is the status of order 12345?',
  });
  t.equal(chat.status, 200, chat.text);
  t.equal(tools.received.length, 1, 'the tool was called once');
  const conversationId = chat.body.conversationId as string;
  startFastWorker(t, app);
  await backdate(app.database.sql, conversationId, 6);

  await eventually(() => receiver.received[0], 'the conversation.analyzed webhook');
  const [payload] = verifiedPayloads(receiver, endpoint.body.secret);
  t.equal(payload.data.conversationId, conversationId);
  t.match(payload.data.toolCalls, [
    {
      id: tools.received[0]!.json.toolCallId,
      name: 'order_status',
      arguments: { orderId: '12345' },
      status: 'succeeded',
      result: { status: 'shipped', eta: '2026-12-01' },
      error: null,
      durationMs: Number,
      at: String,
    },
  ]);
  t.equal(payload.data.toolCalls.length, 1, 'one call, reported once');
});
