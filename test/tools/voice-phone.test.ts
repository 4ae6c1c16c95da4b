import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { live, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from '../voice/helpers.js';
import {
  addNumber,
  callParams,
  callWebhook,
  mulawSilence,
  mulawSpeech,
  openCarrierStream,
  streamOfTwiml,
} from '../telephony/carrier.js';
import { api, orderStatusTool, startToolReceiver } from './helpers.js';

/**
 * Tools in a phone call: a signed carrier webhook answers a call to the owner's number, the caller speaks over the
 * carrier's signed media stream (μ-law, against the simulator), and the backend's function call (the simulator's
 * `[sim:tool=...]` tag) is made by Parley to the owner's receiver, a real HTTP server; the result goes back to the
 * backend, whose answer the caller hears.
 */

const ORDER_TAG = '[sim:tool=order_status{"orderId":"12345"}]';

t.test('a tool in a phone call: one signed request, the result in the answer, the call shows it', async (t) => {
  const app = await startVoiceApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startToolReceiver(t);
  receiver.respond = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ result: { status: 'shipped', eta: '2026-12-01' } }));
  };
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { instructions: `Help with orders. ${ORDER_TAG}` });
  const created = await api(app.url, 'POST', `/api/v1/assistants/${assistant.publicId}/tools`, owner.secret, {
    ...orderStatusTool(receiver.url),
  });
  t.equal(created.status, 201, created.text);

  const number = await addNumber(app, owner, assistant);
  const answer = await callWebhook(app, callParams(number.phoneNumber));
  const stream = streamOfTwiml(answer.text);
  t.ok(stream, `the call is answered with a media stream: ${answer.text}`);
  const carrier = await openCarrierStream(stream!.url, stream!.token);
  t.teardown(() => carrier.ws.close());
  const said: string[] = [];
  let heardBeforeResult: number | undefined;
  live(app, stream!.sessionId).subscribe({
    onOutputTranscript: (delta) => {
      said.push(delta.text);
      if (delta.text.includes('shipped')) heardBeforeResult ??= carrier.heardBytes();
    },
  });
  // The caller asks, then is silent: the end of the utterance.
  for (const frame of mulawSpeech(40)) carrier.media(frame);
  for (const frame of mulawSilence(40)) carrier.media(frame);
  await waitFor(() => said.join(' ').includes('2026-12-01'), 'the answer with the result', 15_000);
  t.match(said.join(' '), /Checking your order\.\.\..*shipped.*2026-12-01/, 'the start message, then the result');
  // The words after the result's first are spoken on the line.
  await waitFor(() => carrier.heardBytes() > heardBeforeResult!, 'the answer on the phone line', 15_000);

  const [row] = await app.database.sql<{ conversationId: string }[]>`
    select conversation_id from voice_sessions where id = ${stream!.sessionId}`;
  t.equal(receiver.received.length, 1, 'the owner was asked once');
  const hook = receiver.received[0]!;
  t.match(hook.json, {
    type: 'tool.call',
    tool: 'order_status',
    arguments: { orderId: '12345' },
    call: { conversationId: row!.conversationId, sessionId: stream!.sessionId, transport: 'phone' },
  });
  const headers = {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  };
  t.match(new Webhook(created.body.secret).verify(hook.body, headers), { tool: 'order_status' }, 'signed');

  const timeline = await api(app.url, 'GET', `/api/v1/voice/sessions/${stream!.sessionId}/timeline`, owner.secret);
  t.equal(timeline.status, 200, timeline.text);
  t.equal(timeline.body.transport, 'phone');
  const event = (type: string) => timeline.body.events.find((e: { type: string }) => e.type === type);
  t.match(event('tool_called'), { detail: { name: 'order_status', toolCallId: hook.json.toolCallId } });
  t.match(event('tool_result'), {
    detail: { name: 'order_status', status: 'succeeded', toolCallId: hook.json.toolCallId },
  });

  // The caller hangs up: the carrier says stop.
  carrier.send({ event: 'stop', streamSid: carrier.messages[0]?.streamSid, stop: {} });
  await carrier.closed;
  const conversation = (await waitFor(async () => {
    const res = await api(app.url, 'GET', `/api/v1/conversations/${row!.conversationId}`, owner.secret);
    const answered = res.body.messages?.some(
      (m: { role: string; content?: string }) => m.role === 'assistant' && /2026-12-01/.test(m.content ?? ''),
    );
    return answered ? res : undefined;
  }, 'the answer in the conversation'))!;
  t.equal(conversation.body.conversation.source, 'phone');
  t.match(conversation.body.toolCalls, [
    { id: hook.json.toolCallId, role: 'tool', name: 'order_status', arguments: { orderId: '12345' } },
  ]);
  t.match(conversation.body.toolCalls[0].result, { status: 'shipped', eta: '2026-12-01' });
  t.equal(receiver.received.length, 1, 'and never asked again');
});
