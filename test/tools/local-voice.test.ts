import t from 'tap';
import { Webhook } from 'standardwebhooks';
import type { VoiceAudioFormat } from '../../src/providers/voice/index.js';
import { loadPronunciations } from '../../src/providers/voice/local/engines.js';
import { prepareSessionModel, recognizeUtterance } from '../../src/providers/voice/local/recognizer.js';
import {
  callAudioToWav,
  framesOf,
  localEngines,
  silence,
  spoken,
  wavSamples,
} from '../providers/voice/local-helpers.js';
import { mediaUrl, openMedia } from '../voice/media-client.js';
import { endWithKey, mintWithKey, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from '../voice/helpers.js';
import { api, orderStatusTool, startToolReceiver } from './helpers.js';

/**
 * The local voice (no model, no network) calls the owner's tools as the local chat engine does, by their examples: a
 * caller asks aloud (espeak-ng speech over the media socket, the order number read digit by digit), the owner's real
 * HTTP receiver gets one signed call with the number, and the spoken answer states its result.
 */
t.test('asked aloud "what is the status of order 1 2 3 4 5", the local voice calls order_status', async (t) => {
  const engines = localEngines();
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startToolReceiver(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const created = await api(
    app.url,
    'POST',
    `/api/v1/assistants/${assistant.publicId}/tools`,
    owner.secret,
    orderStatusTool(receiver.url), // examples: "status of order {orderId}", "where is order {orderId}"
  );
  t.equal(created.status, 201, created.text);
  const secret: string = created.body.secret;

  const audio: VoiceAudioFormat = { format: 'pcm16', sampleRateHz: 24000 };
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  t.teardown(() => media.ws.close());
  const question = framesOf(spoken('What is the status of order 1 2 3 4 5', audio), audio);
  for (const frame of [...silence(200, audio), ...question, ...silence(1000, audio)]) media.send(frame);

  const said = () =>
    media
      .texts('transcript')
      .filter((e) => e.role === 'assistant')
      .map((e) => e.text as string)
      .join(' ');
  const asked = () =>
    media
      .texts('transcript')
      .filter((e) => e.role === 'user')
      .map((e) => e.text as string)
      .join(' ');
  await waitFor(() => said().includes('2026-12-01'), 'the spoken answer with the result', 30_000).catch(
    (err: unknown) => {
      t.comment(`heard: ${asked()} / said: ${said()} / requests: ${receiver.received.length}`);
      throw err;
    },
  );
  t.match(
    said(),
    /Checking your order\.\.\..*Order status: status shipped, eta 2026-12-01\./,
    'start message, then the result',
  );
  t.notMatch(said(), /[{}"]/, 'in words, not JSON');

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

  // What Parley actually sent, recognized back: the result is in the audio, not only in the captions.
  const sent = Buffer.concat(media.events.filter((e) => e.kind === 'binary').map((e) => e.data));
  const model = await prepareSessionModel(
    'Checking your order. Order status: status shipped, eta 2026-12-01.',
    await loadPronunciations(engines.dictionary),
  );
  t.teardown(() => model.dispose());
  const heard = (
    await recognizeUtterance(wavSamples(callAudioToWav(sent, audio)), {
      engines,
      model,
      signal: new AbortController().signal,
    })
  )
    .map((w) => w.word)
    .join(' ');
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
