import t from 'tap';
import { createOwner } from '../helpers/identity.js';
import { addNumber, callParams, callWebhook, openCarrierStream, streamOfTwiml } from '../telephony/carrier.js';
import { live, voiceAssistant, waitFor } from '../voice/helpers.js';
import { api, eventually, startReceiver, startWebhookApp } from './helpers.js';

/**
 * A phone call's events name the phone: voice.session.started and voice.session.ended say `transport: "phone"`, as the
 * call's timeline does (they used to say websocket for every call). Real Parley, Postgres, Redis and the simulator.
 */
t.test('a phone call reports transport phone when it starts and when it ends', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['voice.session.started', 'voice.session.ended'],
  });
  t.equal(endpoint.status, 201, endpoint.text);
  const assistant = await voiceAssistant(app, owner);
  const number = await addNumber(app, owner, assistant);
  const answer = await callWebhook(app, callParams(number.phoneNumber));
  const stream = streamOfTwiml(answer.text);
  t.ok(stream, answer.text);
  const carrier = await openCarrierStream(stream!.url, stream!.token);
  await waitFor(() => live(app, stream!.sessionId).joined || undefined, 'the carrier stream to start');
  carrier.send({ event: 'stop', streamSid: carrier.stream.streamSid, stop: {} });
  await carrier.closed;
  await eventually(() => receiver.received.length >= 2, 'both call events');

  const events = receiver.received.map((hook) => JSON.parse(hook.body) as { type: string; data: any });
  const started = events.find((e) => e.type === 'voice.session.started');
  const ended = events.find((e) => e.type === 'voice.session.ended');
  t.match(started?.data, { sessionId: stream!.sessionId, source: 'phone', transport: 'phone' });
  t.match(ended?.data, { sessionId: stream!.sessionId, source: 'phone', transport: 'phone', endedBy: 'client' });
});
