import t from 'tap';
import { idleChats } from '../../src/analysis/queries.js';
import { createOwner } from '../helpers/identity.js';
import { api, eventually, startReceiver, startWebhookApp } from '../webhooks/helpers.js';
import { ANALYSIS, analysisRows, backdate, startFastWorker, verifiedPayloads } from './helpers.js';

t.test('a chat conversation gone idle is analysed once by the local engine and reported, signed', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['conversation.analyzed'],
  });
  t.equal(endpoint.status, 201, endpoint.text);

  // Settings are validated at the edge: a schema that is not a simple object of fields is a 400 naming the field.
  const created = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Orders' });
  const assistantId = created.body.assistant.id;
  const bad = await api(app.url, 'PATCH', `/api/v1/assistants/${assistantId}`, owner.secret, {
    settings: { analysis: { structuredData: { schema: { type: 'object', properties: { x: { type: 'array' } } } } } },
  });
  t.equal(bad.status, 400, 'a field of type array is refused');
  t.equal(bad.body.code, 'VALIDATION_FAILED');
  t.match(JSON.stringify(bad.body), /analysis/, 'the error names the analysis settings');
  const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, { type: 'string' }]));
  const wide = await api(app.url, 'PATCH', `/api/v1/assistants/${assistantId}`, owner.secret, {
    settings: { analysis: { structuredData: { schema: { type: 'object', properties: tooMany } } } },
  });
  t.equal(wide.status, 400, 'more than 20 properties are refused');
  const patched = await api(app.url, 'PATCH', `/api/v1/assistants/${assistantId}`, owner.secret, {
    settings: { analysis: { ...ANALYSIS, chatIdleMinutes: 5 } },
  });
  t.equal(patched.status, 200, patched.text);
  t.match(patched.body.assistant.settings.analysis, { summary: true, timeoutMs: 10_000, for: ['voice', 'chat'] });

  const chat = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
    assistantId,
    message:
      'Where is my order? The order number is 48213, my email is ada@example.com and please call me back. Thanks!',
  });
  t.equal(chat.status, 200, chat.text);
  const conversationId = chat.body.conversationId as string;
  const worker = startFastWorker(t, app);

  // Not idle yet: nothing is queued.
  worker.kick();
  const before = await api(app.url, 'GET', `/api/v1/conversations/${conversationId}/analysis`, owner.secret);
  t.same(before.body, { analysis: null }, 'a conversation still going has no analysis');

  await backdate(app.database.sql, conversationId, 6);
  const hook = await eventually(() => receiver.received[0], 'the conversation.analyzed webhook');
  const [payload] = verifiedPayloads(receiver, endpoint.body.secret);
  t.equal(payload.type, 'conversation.analyzed');
  t.match(payload.data, {
    conversationId,
    channel: 'chat',
    source: 'api',
    endReason: 'idle',
    endedBy: null,
    billableSeconds: 0,
    costMicros: Number,
    transcript: [
      { role: 'user', content: /order number is 48213/ },
      { role: 'assistant', content: String },
    ],
  });
  t.notOk('recordingUrl' in payload.data, 'no recording URL: a chat has no recording');
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
  const startedAt = Date.parse(payload.data.startedAt);
  const endedAt = Date.parse(payload.data.endedAt);
  t.match(payload.data, { startedAt: iso, endedAt: iso }, 'when the conversation started and ended');
  t.ok(startedAt <= endedAt, 'it ended after it started');
  for (const message of payload.data.transcript as { at: string }[]) {
    t.match(message.at, iso, 'each message has its time');
    const at = Date.parse(message.at);
    t.ok(at >= startedAt && at <= endedAt, 'inside the conversation');
  }
  t.equal(payload.data.durationSeconds, Math.round((endedAt - startedAt) / 1000), 'the duration is the span');
  const analysis = payload.data.analysis;
  t.match(analysis, { status: 'done', engine: 'local', trigger: 'chat:2' });
  t.match(analysis.summary, /^The caller asked: "Where is my order\?.*" The assistant answered: "/);
  t.same(analysis.structuredData, {
    orderNumber: 48213,
    callbackRequested: true,
    email: 'ada@example.com',
    plan: null,
  });
  t.match(analysis.successEvaluation, { rubric: 'pass_fail', verdict: false }, 'the knowledge base had no answer');
  t.match(analysis.sentiment, { label: 'positive' });
  t.same(
    analysis.steps.map((s: any) => `${s.step}:${s.status}`),
    ['summary:ok', 'structuredData:ok', 'successEvaluation:ok', 'sentiment:ok'],
  );
  t.ok(
    analysis.steps[1].notes.includes('"plan" was not found in the conversation'),
    'a field not found is null with a note',
  );
  t.ok(hook.headers['webhook-signature'], 'signed');

  // Once: the sweeps (two workers run them) find nothing more to queue for it.
  t.notOk(
    (await idleChats(app.database.sql, 200)).some((c) => c.conversationId === conversationId),
    'no sweep queues it again',
  );
  const messages = await app.database.sql`
    select count(*)::int as n from webhook_messages where event_type = 'conversation.analyzed'`;
  t.equal(messages[0]!.n, 1, 'one report');
  t.equal((await analysisRows(app.database.sql, conversationId))[0]!.attempts, 1, 'analysed once');

  // The API and the conversation detail show the same analysis.
  const got = await api(app.url, 'GET', `/api/v1/conversations/${conversationId}/analysis`, owner.secret);
  t.same(got.body.analysis, analysis);
  const detail = await api(app.url, 'GET', `/api/v1/conversations/${conversationId}`, owner.secret);
  t.same(detail.body.analysis, analysis);

  // POST re-runs it (a second report follows).
  const rerun = await api(app.url, 'POST', `/api/v1/conversations/${conversationId}/analysis`, owner.secret);
  t.equal(rerun.status, 202, rerun.text);
  t.match(rerun.body.analysis, { status: 'pending', trigger: /^rerun:/ });
  await eventually(() => receiver.received.length === 2, 'the re-run report');

  // Another account sees nothing; deleting the conversation deletes its analysis.
  const other = await createOwner(app.database.sql);
  const foreign = await api(app.url, 'GET', `/api/v1/conversations/${conversationId}/analysis`, other.secret);
  t.equal(foreign.status, 404);
  t.equal(foreign.body.code, 'ANALYSIS_CONVERSATION_NOT_FOUND');
  t.equal((await api(app.url, 'DELETE', `/api/v1/conversations/${conversationId}`, owner.secret)).status, 200);
  t.same(await analysisRows(app.database.sql, conversationId), [], 'the analysis went with the conversation');
});

t.test('re-running needs a step turned on', async (t) => {
  const app = await startWebhookApp(t);
  const owner = await createOwner(app.database.sql);
  const created = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Plain' });
  const chat = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
    assistantId: created.body.assistant.id,
    message: 'Hello?',
  });
  const res = await api(app.url, 'POST', `/api/v1/conversations/${chat.body.conversationId}/analysis`, owner.secret);
  t.equal(res.status, 409);
  t.equal(res.body.code, 'ANALYSIS_NOT_ENABLED');
  const missing = await api(app.url, 'GET', '/api/v1/conversations/conv_nope/analysis', owner.secret);
  t.equal(missing.status, 404);
});
