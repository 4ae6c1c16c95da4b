import t from 'tap';
import { endWithKey, startVoiceApp, waitFor } from '../voice/helpers.js';
import { api, startToolReceiver } from './helpers.js';
import { askOrderStatusAloud, recognizedAudio, said } from './local-voice-helpers.js';

/**
 * An async tool on the local voice (no model, no network): the caller hears that it started at once, and when the
 * owner's receiver answers (1.5 s later, while the call is live) the assistant says the result, after what it was
 * saying, stated in words as a sync tool's result is; the line is the assistant's turn in the conversation.
 */
const RECEIVER_DELAY_MS = 1500;

t.test('an async tool on the local voice: "started" at once, the result spoken when it arrives', async (t) => {
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startToolReceiver(t);
  let answeredAt: number | undefined;
  const timers: NodeJS.Timeout[] = [];
  t.teardown(() => timers.forEach(clearTimeout));
  receiver.respond = (_req, res) => {
    timers.push(
      setTimeout(() => {
        answeredAt = Date.now();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ result: { status: 'delivered', eta: '2026-12-01' } }));
      }, RECEIVER_DELAY_MS),
    );
  };
  const { owner, minted, media } = await askOrderStatusAloud(t, app, receiver.url, {
    mode: 'async',
    timeoutMs: 20_000,
  });

  const trace = () =>
    `heard: ${said(media, 'user')} / said: ${said(media, 'assistant')} / requests: ${receiver.received.length}`;
  await waitFor(() => said(media, 'assistant').includes('started'), 'the started answer', 30_000).catch(
    (err: unknown) => {
      t.comment(trace());
      throw err;
    },
  );
  t.equal(answeredAt, undefined, 'that it started is heard before the receiver answers');
  // Its last words: the audio of the result is sent by then.
  await waitFor(() => said(media, 'assistant').includes('2026-12-01'), 'the late result, spoken', 30_000).catch(
    (err: unknown) => {
      t.comment(trace());
      throw err;
    },
  );
  t.match(
    said(media, 'assistant'),
    /Order status has started.*the result will follow\..*Order status: status delivered, eta 2026-12-01\./,
    'that it started, then the result in words',
  );
  t.notMatch(said(media, 'assistant'), /[{}"]/, 'in words, not JSON');
  t.equal(receiver.received.length, 1, 'the receiver was asked once');
  t.match(receiver.received[0]!.json, { tool: 'order_status', arguments: { orderId: '12345' } });

  const heard = await recognizedAudio(
    t,
    media,
    'Order status has started; the result will follow. Order status: status delivered, eta 2026-12-01.',
  );
  t.match(heard, /delivered/, `the audio says the result ("${heard}")`);

  media.ws.close();
  await endWithKey(app, owner, minted.sessionId);
  const conversation = await api(app.url, 'GET', `/api/v1/conversations/${minted.conversationId}`, owner.secret);
  t.equal(conversation.status, 200, conversation.text);
  const assistantTurns = (conversation.body.messages as Array<{ role: string; content: string }>).filter(
    (m) => m.role === 'assistant',
  );
  t.ok(
    assistantTurns.some((m) => m.content.includes('Order status: status delivered, eta 2026-12-01.')),
    'the spoken result is the assistant turn in the conversation',
  );
  t.match(conversation.body.toolCalls, [
    { name: 'order_status', status: 'succeeded', result: { status: 'delivered' } },
  ]);
  t.equal(conversation.body.toolCalls.length, 1, 'one tool call in the conversation');
});

t.test('an async tool whose result arrives after the call ended: nothing is spoken, the result is kept', async (t) => {
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startToolReceiver(t);
  let answer: (() => void) | undefined;
  receiver.respond = (_req, res) => {
    answer = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: { status: 'delivered' } }));
    };
  };
  const { owner, minted, media } = await askOrderStatusAloud(t, app, receiver.url, {
    mode: 'async',
    timeoutMs: 20_000,
  });
  await waitFor(() => said(media, 'assistant').includes('started'), 'the started answer', 30_000);
  t.ok(answer, 'the request is on its way, unanswered');

  media.ws.close();
  await endWithKey(app, owner, minted.sessionId);
  answer!();
  const conversation = (await waitFor(async () => {
    const res = await api(app.url, 'GET', `/api/v1/conversations/${minted.conversationId}`, owner.secret);
    return res.body.toolCalls?.[0]?.status === 'succeeded' ? res : undefined;
  }, 'the result kept with the conversation'))!;
  t.match(conversation.body.toolCalls[0].result, { status: 'delivered' });
  const contents = (conversation.body.messages as Array<{ content: string }>).map((m) => m.content).join(' ');
  t.notMatch(contents, /delivered/, 'the result was not spoken after the call ended');
  t.equal(receiver.received.length, 1, 'the receiver was asked once');
});
