import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { endWithKey, startVoiceApp, waitFor } from '../voice/helpers.js';
import { api, startToolReceiver } from './helpers.js';
import { askOrderStatusAloud, recognizedAudio, said } from './local-voice-helpers.js';

/**
 * The local voice (no model, no network) calls the owner's tools as the local chat engine does, by their examples: a
 * caller asks aloud (espeak-ng speech over the media socket, the order number read digit by digit), the owner's real
 * HTTP receiver gets one signed call with the number, and the spoken answer states its result.
 */
t.test('asked aloud "what is the status of order 1 2 3 4 5", the local voice calls order_status', async (t) => {
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startToolReceiver(t);
  // The tool's examples: "status of order {orderId}", "where is order {orderId}".
  const { owner, secret, minted, media } = await askOrderStatusAloud(t, app, receiver.url);

  await waitFor(
    () => said(media, 'assistant').includes('2026-12-01'),
    'the spoken answer with the result',
    30_000,
  ).catch((err: unknown) => {
    t.comment(
      `heard: ${said(media, 'user')} / said: ${said(media, 'assistant')} / requests: ${receiver.received.length}`,
    );
    throw err;
  });
  t.match(
    said(media, 'assistant'),
    /Checking your order\.\.\..*Order status: status shipped, eta 2026-12-01\./,
    'start message, then the result',
  );
  t.notMatch(said(media, 'assistant'), /[{}"]/, 'in words, not JSON');

  t.equal(receiver.received.length, 1, 'one request');
  const hook = receiver.received[0]!;
  t.match(hook.json, {
    type: 'tool.call',
    toolCallId: /^tcall_/,
    tool: 'order_status',
    arguments: { orderId: '12345' },
    call: { conversationId: minted.conversationId, sessionId: minted.sessionId, transport: 'websocket' },
  });
  t.same(hook.json.arguments, { orderId: '12345' }, 'the number as the caller read it out, nothing else');
  t.equal(hook.headers['webhook-id'], hook.json.toolCallId);
  const headers = {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  };
  t.match(new Webhook(secret).verify(hook.body, headers), { tool: 'order_status' }, 'signed with the tool secret');

  const heard = await recognizedAudio(t, media, 'Checking your order. Order status: status shipped, eta 2026-12-01.');
  t.match(heard, /shipped/, `the answer audio says the result ("${heard}")`);

  media.ws.close();
  await endWithKey(app, owner, minted.sessionId);
  const conversation = await api(app.url, 'GET', `/api/v1/conversations/${minted.conversationId}`, owner.secret);
  t.equal(conversation.status, 200, conversation.text);
  t.match(conversation.body.toolCalls, [
    {
      id: hook.json.toolCallId,
      role: 'tool',
      name: 'order_status',
      arguments: { orderId: '12345' },
      status: 'succeeded',
      result: { status: 'shipped', eta: '2026-12-01' },
      error: null,
      durationMs: Number,
    },
  ]);
  t.equal(conversation.body.toolCalls.length, 1, 'one tool call in the conversation');
});
