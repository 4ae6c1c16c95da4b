import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { WebRtcCaller } from '../providers/voice/webrtc-caller.js';
import {
  endWithKey,
  live,
  mintWithKey,
  ownerWithVoice,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from '../voice/helpers.js';
import { api, orderStatusTool, startToolReceiver } from './helpers.js';

/**
 * Tools in a WebRTC call: the caller's audio goes to the provider over a real WebRTC peer (node-datachannel against the
 * simulator), Parley holds the sideband, and the backend's function call (the simulator's `[sim:tool=...]` tag) is
 * made by Parley to the owner's receiver, a real HTTP server; the result goes back to the backend, whose answer says it.
 */

const ORDER_TAG = '[sim:tool=order_status{"orderId":"12345"}]';

t.test('a tool in a WebRTC call: one signed request, the result in the answer, the call shows it', async (t) => {
  const sim = await startVoiceSimulator({ usageIntervalMs: 200, transcriptChunkMs: 100, wordMs: 40 });
  t.teardown(() => sim.close());
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER_URL: sim.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
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

  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  const minted = await mintWithKey(app, owner, assistant, { transport: { type: 'webrtc', sdp: await caller.offer() } });
  caller.answer((minted.transport as { sdp: string }).sdp);
  const session = live(app, minted.sessionId);
  const said: string[] = [];
  let words = 0;
  let heardBeforeResult: number | undefined;
  session.subscribe({
    onInputTranscript: () => void words++,
    onOutputTranscript: (delta) => {
      said.push(delta.text);
      if (delta.text.includes('shipped')) heardBeforeResult ??= caller.voicedPacketsIn;
    },
  });
  // The caller asks (a tone the simulator hears as words), then is silent: the end of the utterance.
  caller.talk(true);
  await waitFor(() => words >= 2, "the caller's words over the sideband", 15_000);
  caller.talk(false);
  await waitFor(() => said.join(' ').includes('2026-12-01'), 'the answer with the result', 15_000);
  t.match(said.join(' '), /Checking your order\.\.\..*shipped.*2026-12-01/, 'the start message, then the result');
  // The words after the result's first are heard over WebRTC.
  await waitFor(() => caller.voicedPacketsIn > heardBeforeResult!, 'the answer heard over WebRTC', 15_000);

  t.equal(receiver.received.length, 1, 'the owner was asked once');
  const hook = receiver.received[0]!;
  t.match(hook.json, {
    type: 'tool.call',
    tool: 'order_status',
    arguments: { orderId: '12345' },
    call: { conversationId: minted.conversationId, sessionId: minted.sessionId, transport: 'webrtc' },
  });
  const headers = {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  };
  t.match(new Webhook(created.body.secret).verify(hook.body, headers), { tool: 'order_status' }, 'signed');

  const timeline = await api(app.url, 'GET', `/api/v1/voice/sessions/${minted.sessionId}/timeline`, owner.secret);
  t.equal(timeline.status, 200, timeline.text);
  t.equal(timeline.body.transport, 'webrtc');
  const event = (type: string) => timeline.body.events.find((e: { type: string }) => e.type === type);
  t.match(event('tool_called'), { detail: { name: 'order_status', toolCallId: hook.json.toolCallId } });
  t.match(event('tool_result'), {
    detail: { name: 'order_status', status: 'succeeded', toolCallId: hook.json.toolCallId },
  });

  t.equal((await endWithKey(app, owner, minted.sessionId)).status, 200);
  const conversation = (await waitFor(async () => {
    const res = await api(app.url, 'GET', `/api/v1/conversations/${minted.conversationId}`, owner.secret);
    const answered = res.body.messages?.some(
      (m: { role: string; content?: string }) => m.role === 'assistant' && /2026-12-01/.test(m.content ?? ''),
    );
    return answered ? res : undefined;
  }, 'the answer in the conversation'))!;
  t.match(conversation.body.toolCalls, [
    { id: hook.json.toolCallId, role: 'tool', name: 'order_status', arguments: { orderId: '12345' } },
  ]);
  t.match(conversation.body.toolCalls[0].result, { status: 'shipped', eta: '2026-12-01' });
  t.equal(receiver.received.length, 1, 'and never asked again');
});
