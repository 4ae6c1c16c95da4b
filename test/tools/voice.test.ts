import t from 'tap';
import { Webhook } from 'standardwebhooks';
import type { ServerResponse } from 'node:http';
import { mediaUrl, openMedia, speechFrames, type MediaClient } from '../voice/media-client.js';
import { endWithKey, mintWithKey, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from '../voice/helpers.js';
import { api, orderStatusTool, startToolReceiver, type ToolRequest } from './helpers.js';

/**
 * Tools in a voice call, over the real media WebSocket against the simulator (its `[sim:tool=...]` tag makes its next
 * reply a function call of the session's backend), with the owner's receiver a real HTTP server.
 */

const ORDER_TAG = '[sim:tool=order_status{"orderId":"12345"}]';

/** Says two words and stops (the simulator's end of utterance). */
function sayTwoWords(media: MediaClient): void {
  for (const frame of speechFrames(40)) media.send(frame);
  for (let i = 0; i < 40; i++) media.send(Buffer.alloc(960));
}

/** What the caller saw captioned of the assistant, in order. */
function captions(media: MediaClient): string {
  return media
    .texts('transcript')
    .filter((e) => e.role === 'assistant')
    .map((e) => e.text)
    .join(' ');
}

t.test('tools in a voice call', async (t) => {
  const app = await startVoiceApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startToolReceiver(t);
  const owner = await ownerWithVoice(app);

  async function assistantWithTool(instructions: string, tool: Record<string, unknown> = {}, extra?: object) {
    const assistant = await voiceAssistant(app, owner, { instructions });
    const created = await api(app.url, 'POST', `/api/v1/assistants/${assistant.publicId}/tools`, owner.secret, {
      ...orderStatusTool(receiver.url),
      ...tool,
    });
    t.equal(created.status, 201, created.text);
    if (extra) {
      const more = await api(app.url, 'POST', `/api/v1/assistants/${assistant.publicId}/tools`, owner.secret, extra);
      t.equal(more.status, 201, more.text);
    }
    return { assistant, secret: created.body.secret as string };
  }

  async function call(assistant: Awaited<ReturnType<typeof assistantWithTool>>['assistant']) {
    const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
    const media = await openMedia(mediaUrl(app, minted));
    t.teardown(() => media.ws.close());
    return { minted, media };
  }

  t.test('the caller asks: one signed request, the start message heard, the answer states the result', async (t) => {
    receiver.received.length = 0;
    receiver.respond = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: { status: 'shipped', eta: '2026-12-01' } }));
    };
    const { assistant, secret } = await assistantWithTool(`Help with orders. ${ORDER_TAG}`);
    const { minted, media } = await call(assistant);
    sayTwoWords(media);
    await waitFor(() => captions(media).includes('2026-12-01'), 'the answer with the result', 15_000);
    t.match(captions(media), /Checking your order\.\.\..*shipped.*2026-12-01/, 'start message first, then the result');

    t.equal(receiver.received.length, 1, 'one request');
    const hook = receiver.received[0]!;
    t.match(hook.json, {
      type: 'tool.call',
      tool: 'order_status',
      arguments: { orderId: '12345' },
      call: { conversationId: minted.conversationId, sessionId: minted.sessionId, transport: 'websocket' },
    });
    const headers = {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    };
    t.match(new Webhook(secret).verify(hook.body, headers), { tool: 'order_status' }, 'signed with the tool secret');

    const timeline = await api(app.url, 'GET', `/api/v1/voice/sessions/${minted.sessionId}/timeline`, owner.secret);
    t.equal(timeline.status, 200, timeline.text);
    const types = timeline.body.events.map((e: { type: string }) => e.type);
    t.ok(types.includes('tool_called') && types.includes('tool_result'), 'the timeline shows the call');
    t.match(
      timeline.body.events.find((e: { type: string }) => e.type === 'tool_result'),
      { detail: { name: 'order_status', status: 'succeeded', toolCallId: hook.json.toolCallId } },
    );

    await endWithKey(app, owner, minted.sessionId);
    const conversation = await api(app.url, 'GET', `/api/v1/conversations/${minted.conversationId}`, owner.secret);
    t.match(conversation.body.toolCalls, [
      { id: hook.json.toolCallId, role: 'tool', name: 'order_status', arguments: { orderId: '12345' } },
    ]);
    t.match(conversation.body.toolCalls[0].result, { status: 'shipped' });
  });

  t.test('a tool that does not answer in time: delayed message, then the failed message; asked once', async (t) => {
    receiver.received.length = 0;
    const held: ServerResponse[] = [];
    receiver.respond = (_req, res) => void held.push(res); // never answered in time
    const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
      url: 'https://hooks.example.com/parley',
      events: ['tool.failed'],
    });
    t.equal(endpoint.status, 201, endpoint.text);
    t.teardown(() => held.forEach((res) => res.destroy()));
    const { assistant } = await assistantWithTool(ORDER_TAG, {
      timeoutMs: 1000,
      messages: {
        start: 'Checking your order...',
        delayed: [{ afterMs: 300, text: 'Still checking, thanks for waiting.' }],
        failed: 'I could not reach the order system.',
      },
    });
    const { minted, media } = await call(assistant);
    sayTwoWords(media);
    await waitFor(() => captions(media).includes('reach'), 'the failed message', 15_000);
    t.match(captions(media), /Checking your order.*Still checking, thanks for waiting\..*I could not reach/);
    t.equal(receiver.received.length, 1, 'a sync tool is never retried');
    const [message] = (await waitFor(async () => {
      const rows = await app.database.sql`select body from webhook_messages where event_type = 'tool.failed'`;
      return rows.length > 0 ? rows : undefined;
    }, 'the tool.failed event'))!;
    t.match(JSON.parse(message!.body as string), {
      type: 'tool.failed',
      data: { tool: 'order_status', sessionId: minted.sessionId, source: 'api', error: /no answer within 1 s/ },
    });
    const timeline = await api(app.url, 'GET', `/api/v1/voice/sessions/${minted.sessionId}/timeline`, owner.secret);
    t.match(
      timeline.body.events.find((e: { type: string }) => e.type === 'tool_result'),
      { detail: { status: 'failed' } },
    );
    await endWithKey(app, owner, minted.sessionId);
  });

  t.test('the caller talks over a running tool; parallel calls run together; nothing is asked twice', async (t) => {
    receiver.received.length = 0;
    const held: Array<{ req: ToolRequest; res: ServerResponse }> = [];
    receiver.respond = (req, res) => void held.push({ req, res });
    t.teardown(() => held.forEach(({ res }) => res.destroy()));
    const { assistant } = await assistantWithTool(
      `${ORDER_TAG} [sim:tool=store_hours{"day":"monday"}]`,
      { timeoutMs: 20_000 },
      {
        name: 'store_hours',
        description: 'Opening hours of the store on a day.',
        parameters: { type: 'object', properties: { day: { type: 'string' } }, required: ['day'] },
        url: receiver.url,
        timeoutMs: 20_000,
      },
    );
    const { minted, media } = await call(assistant);
    sayTwoWords(media);
    // Both requests are in flight at once: neither was answered yet.
    await waitFor(() => held.length === 2, 'both tool requests at once', 15_000);
    t.same(held.map((h) => h.req.json.tool).sort(), ['order_status', 'store_hours']);
    // The caller talks over the assistant while the tools run.
    const before = media.texts('transcript').filter((e) => e.role === 'user').length;
    sayTwoWords(media);
    await waitFor(
      () => media.texts('transcript').filter((e) => e.role === 'user').length > before,
      'the caller heard talking over',
    );
    for (const { req, res } of held) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const result = req.json.tool === 'order_status' ? { status: 'delivered' } : { opens: 'nine' };
      res.end(JSON.stringify({ result }));
    }
    await waitFor(() => captions(media).includes('delivered') && captions(media).includes('nine'), 'both results');
    t.equal(receiver.received.length, 2, 'each tool asked once: the results were kept, not requested again');
    await endWithKey(app, owner, minted.sessionId);
    const conversation = await api(app.url, 'GET', `/api/v1/conversations/${minted.conversationId}`, owner.secret);
    t.equal(conversation.body.toolCalls.length, 2);
  });

  t.test('built-in end_call: the assistant ends the call, assistant_ended, no fault', async (t) => {
    const assistant = await voiceAssistant(app, owner, {
      instructions: 'Say goodbye and hang up. [sim:tool=end_call{}]',
      settings: { builtins: ['end_call'] },
    });
    const { minted, media } = await call(assistant);
    sayTwoWords(media);
    const ended = await media.waitText((e) => e.type === 'ended', 'the call to end', 15_000);
    t.equal(ended.endReason, 'assistant_ended');
    const timeline = (await waitFor(async () => {
      const res = await api(app.url, 'GET', `/api/v1/voice/sessions/${minted.sessionId}/timeline`, owner.secret);
      return res.body.end === null ? undefined : res;
    }, 'the settled call'))!;
    t.match(timeline.body.end, { reason: 'assistant_ended', fault: null });
    t.ok(
      timeline.body.events.some(
        (e: { type: string; detail?: { name?: string } }) => e.type === 'tool_called' && e.detail?.name === 'end_call',
      ),
    );
  });

  t.test('tool analytics: calls, errors and p50/p95 per tool', async (t) => {
    const { assistant } = await assistantWithTool(ORDER_TAG);
    const { minted, media } = await call(assistant);
    receiver.respond = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: { status: 'shipped' } }));
    };
    sayTwoWords(media);
    await waitFor(() => captions(media).includes('shipped'), 'the answer');
    await endWithKey(app, owner, minted.sessionId);
    const path = `/api/v1/assistants/${assistant.publicId}/tool-analytics?days=7`;
    const stats = await waitFor(async () => {
      const res = await api(app.url, 'GET', path, owner.secret);
      return res.body?.tools?.length === 1 ? res : undefined;
    }, 'the call counted');
    t.equal(stats!.status, 200, stats!.text);
    t.match(stats!.body.tools, [{ name: 'order_status', calls: 1, errors: 0, p50Ms: Number, p95Ms: Number }]);
    const bad = await api(
      app.url,
      'GET',
      `/api/v1/assistants/${assistant.publicId}/tool-analytics?days=0`,
      owner.secret,
    );
    t.equal(bad.status, 400);
  });

  t.test('an async tool: the model hears "started" at once; the result is given to it when it arrives', async (t) => {
    receiver.received.length = 0;
    const held: ServerResponse[] = [];
    receiver.respond = (_req, res) => void held.push(res);
    t.teardown(() => held.forEach((res) => res.destroy()));
    const { assistant } = await assistantWithTool(ORDER_TAG, { mode: 'async', timeoutMs: 20_000 });
    const { minted, media } = await call(assistant);
    sayTwoWords(media);
    // The backend is answered before the owner's server: it says the call started.
    await waitFor(() => captions(media).includes('started'), 'the started answer', 15_000);
    t.equal(held.length, 1, 'the request is on its way, unanswered');
    held[0]!.writeHead(200, { 'content-type': 'application/json' });
    held[0]!.end(JSON.stringify({ result: { status: 'packed' } }));
    await waitFor(() => captions(media).includes('packed'), 'the late result, given to the model', 15_000);
    t.equal(receiver.received.length, 1);
    await endWithKey(app, owner, minted.sessionId);
    const conversation = await waitFor(async () => {
      const res = await api(app.url, 'GET', `/api/v1/conversations/${minted.conversationId}`, owner.secret);
      return res.body.toolCalls?.[0]?.status === 'succeeded' ? res : undefined;
    }, 'the pending item completed');
    t.match(conversation!.body.toolCalls[0].result, { status: 'packed' });
  });
});
