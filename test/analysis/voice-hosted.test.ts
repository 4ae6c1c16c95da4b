import t from 'tap';
import { createOwner } from '../helpers/identity.js';
import { startChatSimulator } from '../providers/chat/simulator.js';
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

t.test('a voice call analysed by the OpenAI-compatible provider: once, reported once, metered', async (t) => {
  const sim = await startChatSimulator(t);
  const app = await startVoiceApp(t, {
    env: {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      CHAT_PROVIDER: 'openai',
      OPENAI_BASE_URL: sim.baseUrl,
      OPENAI_API_KEY: 'sk-upstream-secret',
      OPENAI_MODEL: 'gpt-4o-mini',
    },
  });
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['conversation.analyzed'],
  });
  const assistant = await voiceAssistant(app, owner, {
    settings: { analysis: { ...ANALYSIS, for: ['voice'] } as never },
  });
  // One answer per step: summary, structured data, success, sentiment.
  sim.script(
    { kind: 'stream', pieces: ['The caller asked about order 48213 and wants a call back.'] },
    { kind: 'stream', pieces: ['{"orderNumber": 48213, "callbackRequested": true, "email": null, "plan": null}'] },
    { kind: 'stream', pieces: ['{"verdict": true, "rationale": "The caller got an answer."}'] },
    { kind: 'stream', pieces: ['{"label": "positive", "score": 0.6}'] },
  );
  const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
  const lines = ndjsonReader(await openGate(app, minted));
  await lines.next();
  speak(live(app, minted.sessionId), 2);
  for (let line = await lines.next(); !(line?.type === 'gate' && line.state === 'open'); line = await lines.next());
  t.equal((await endWithKey(app, owner, minted.sessionId)).status, 200);

  await waitFor(() => receiver.received.length > 0, 'the conversation.analyzed webhook', 15_000);
  const [payload] = verifiedPayloads(receiver, endpoint.body.secret);
  t.match(payload.data, {
    conversationId: minted.conversationId,
    channel: 'voice',
    analysis: {
      status: 'done',
      engine: 'openai',
      trigger: `voice:${minted.sessionId}`,
      summary: 'The caller asked about order 48213 and wants a call back.',
      structuredData: { orderNumber: 48213, callbackRequested: true, email: null, plan: null },
      successEvaluation: { rubric: 'pass_fail', verdict: true },
      sentiment: { label: 'positive', score: 0.6 },
    },
  });
  t.ok(payload.data.analysis.costMicros > 0, 'the report says what the analysis cost');
  t.equal(sim.requests.length, 4, 'one request per step, none repeated');
  t.match(await analysisRows(app.database.sql, minted.conversationId), [{ status: 'done', attempts: 1 }]);
  const [usage] = await app.database.sql<Array<{ count: number; cost: number }>>`
    select count(*)::int as count, coalesce(sum(cost_micros), 0)::int as cost from usage_events
    where source = 'analysis' and assistant_id = ${assistant.id} and outcome = 'settled'`;
  t.same(usage, { count: 4, cost: payload.data.analysis.costMicros }, "metered as the assistant's analysis usage");
  t.equal(receiver.received.length, 1, 'delivered once');
});
