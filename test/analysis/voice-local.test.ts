import t from 'tap';
import { createOwner } from '../helpers/identity.js';
import {
  endWithKey,
  live,
  mintWithKey,
  ndjsonReader,
  openGate,
  speak,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from '../voice/helpers.js';
import { api, startReceiver } from '../webhooks/helpers.js';
import { ANALYSIS, analysisRows, verifiedPayloads } from './helpers.js';

t.test('a voice call (simulator) is analysed once when it settles and reported with its figures', async (t) => {
  const app = await startVoiceApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['conversation.analyzed'],
  });
  const assistant = await voiceAssistant(app, owner, {
    settings: { analysis: { ...ANALYSIS, for: ['voice'] } as never },
  });
  const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
  const lines = ndjsonReader(await openGate(app, minted));
  await lines.next();
  speak(live(app, minted.sessionId), 2);
  // The caller spoke (the gate closes), then the assistant answered (it opens).
  for (let line = await lines.next(); !(line?.type === 'gate' && line.state === 'open'); line = await lines.next());
  const ended = await endWithKey(app, owner, minted.sessionId);
  t.equal(ended.status, 200);

  // The app's own worker finds the settled call (no hook in the voice capability) and analyses it.
  await waitFor(() => receiver.received.length > 0, 'the conversation.analyzed webhook', 15_000);
  const [payload] = verifiedPayloads(receiver, endpoint.body.secret);
  t.match(payload, {
    type: 'conversation.analyzed',
    data: {
      conversationId: minted.conversationId,
      assistantId: assistant.id,
      channel: 'voice',
      source: 'api',
      endReason: null,
      endedBy: 'client',
      fault: null,
      billableSeconds: ended.body.billableSeconds,
      costMicros: Number,
      calls: [{ sessionId: minted.sessionId, endedBy: 'client' }],
      transcript: [{ role: 'user' }],
      analysis: { status: 'done', engine: 'local', trigger: `voice:${minted.sessionId}` },
    },
  });
  t.type(payload.data.durationSeconds, 'number');
  t.match(payload.data.analysis.summary, /^The caller asked: "/);
  t.ok(payload.data.analysis.sentiment, 'sentiment from the word list');
  t.equal(payload.data.analysis.steps.length, 4, 'each enabled step reported');

  const rows = await analysisRows(app.database.sql, minted.conversationId);
  t.match(rows, [{ status: 'done', attempts: 1 }], 'analysed once');
  const detail = await api(app.url, 'GET', `/api/v1/conversations/${minted.conversationId}`, owner.secret);
  t.same(detail.body.analysis, payload.data.analysis, 'the conversation detail shows the same analysis');
});
