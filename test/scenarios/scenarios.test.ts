import t from 'tap';
import { createOwner } from '../helpers/identity.js';
import { addReadyTextDocument } from '../providers/voice/local-helpers.js';
import { orderStatusTool } from '../tools/helpers.js';
import { startReceiver, startWebhookApp } from '../webhooks/helpers.js';
import { api, DOCUMENT, eventually, runScenarios } from './helpers.js';

t.test('owner REST for scenarios, and chat scenarios run with verdicts and evidence', async (t) => {
  const app = await startWebhookApp(t, { env: { CHAT_PROVIDER: 'local' } });
  const owner = await createOwner(app.database.sql);
  const other = await createOwner(app.database.sql);
  const made = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Notes' });
  const assistant = made.body.assistant;
  const base = `/api/v1/assistants/${assistant.publicId}/scenarios`;

  // ---- validation, each refusal naming its field ------------------------------------------------------------
  const fact = {
    name: 'price',
    transport: 'chat',
    turns: [{ say: 'How much does the premium plan cost?' }],
    expect: [{ mustSay: '4.99 euros' }, { maxTurnLatencyMs: 20_000 }],
  };
  const refused = async (body: Record<string, unknown>, status: number, code: string, field?: RegExp) => {
    const res = await api(app.url, 'POST', base, owner.secret, { ...fact, ...body });
    t.equal(res.status, status, `${JSON.stringify(body).slice(0, 90)}: ${res.text.slice(0, 200)}`);
    t.equal(res.body.code, code);
    if (field && code === 'VALIDATION_FAILED')
      t.ok(
        res.body.details.issues.some((i: { path: string }) => field.test(i.path)),
        `names ${field}: ${JSON.stringify(res.body.details.issues)}`,
      );
    else if (field) t.match(res.body.details.field, field);
  };
  await refused({ transport: 'fax' }, 400, 'VALIDATION_FAILED', /^body\.transport$/);
  await refused({ turns: [] }, 400, 'VALIDATION_FAILED', /^body\.turns$/);
  await refused({ turns: [{ sing: 'la' }] }, 400, 'VALIDATION_FAILED', /^body\.turns\.0/);
  await refused({ expect: [{ mustSay: '' }] }, 400, 'VALIDATION_FAILED', /^body\.expect\.0/);
  await refused({ expect: [{ mustSay: '/(unclosed/' }] }, 400, 'SCENARIO_INVALID_REGEX', /^expect\.0\.mustSay$/);
  await refused({ turns: [{ say: 'hi' }, { press: '12' }] }, 400, 'SCENARIO_TURN_UNSUPPORTED', /^turns\.1$/);
  await refused(
    { turns: [{ say: 'hi' }, { interrupt: 'wait', afterMs: 100 }] },
    400,
    'SCENARIO_TURN_UNSUPPORTED',
    /^turns\.1$/,
  );
  await refused({ expect: [{ maxFirstAudioMs: 900 }] }, 400, 'SCENARIO_EXPECT_UNSUPPORTED', /^expect\.0$/);
  await refused(
    { transport: 'websocket', expect: [{ stopsWithinMs: 300 }] },
    400,
    'SCENARIO_EXPECT_UNSUPPORTED',
    /^expect\.0$/,
  );
  await refused(
    {
      toolMocks: [
        { tool: 'a', result: 1 },
        { tool: 'a', result: 2 },
      ],
    },
    400,
    'SCENARIO_MOCK_DUPLICATE',
    /^toolMocks\.1$/,
  );

  // ---- CRUD ---------------------------------------------------------------------------------------------------
  const created = await api(app.url, 'POST', base, owner.secret, fact);
  t.equal(created.status, 201, created.text);
  t.match(created.body.scenario, { id: /^scn_/, assistantId: assistant.id, name: 'price', toolMocks: [] });
  const scenarioId: string = created.body.scenario.id;
  t.match(await api(app.url, 'POST', base, owner.secret, fact), { status: 409, body: { code: 'SCENARIO_NAME_TAKEN' } });
  const wrong = await api(app.url, 'POST', base, owner.secret, {
    ...fact,
    name: 'wrong price',
    expect: [{ neverSay: '4.99 euros' }],
  });
  t.equal(wrong.status, 201);
  const tool = await api(
    app.url,
    'POST',
    `/api/v1/assistants/${assistant.id}/tools`,
    owner.secret,
    orderStatusTool('http://127.0.0.1:9/never-called'),
  );
  t.equal(tool.status, 201, tool.text);
  const toolScenario = await api(app.url, 'POST', base, owner.secret, {
    name: 'order',
    transport: 'chat',
    turns: [{ say: 'What is the status of order 12345?' }],
    expect: [{ toolCalled: { name: 'order_status', arguments: { orderId: '12345' } } }, { mustSay: 'delivered' }],
    toolMocks: [{ tool: 'order_status', result: { status: 'delivered' } }],
  });
  t.equal(toolScenario.status, 201, toolScenario.text);

  const patched = await api(app.url, 'PATCH', `${base}/${scenarioId}`, owner.secret, { name: 'fact: price' });
  t.match(patched, { status: 200, body: { scenario: { name: 'fact: price', turns: fact.turns } } });
  t.match(await api(app.url, 'PATCH', `${base}/${scenarioId}`, owner.secret, { name: 'order' }), {
    status: 409,
    body: { code: 'SCENARIO_NAME_TAKEN' },
  });
  t.match(await api(app.url, 'PATCH', `${base}/${scenarioId}`, owner.secret, { expect: [{ neverSay: '/[/' }] }), {
    status: 400,
    body: { code: 'SCENARIO_INVALID_REGEX' },
  });
  const listed = await api(app.url, 'GET', base, owner.secret);
  t.same(
    listed.body.scenarios.map((s: { name: string }) => s.name),
    ['fact: price', 'wrong price', 'order'],
  );
  t.equal((await api(app.url, 'GET', base, other.secret)).status, 404, "another owner's assistant is not found");
  t.equal((await api(app.url, 'GET', `${base}/scn_nope`, owner.secret)).body.code, 'SCENARIO_NOT_FOUND');

  // ---- runs ---------------------------------------------------------------------------------------------------
  const receiver = await startReceiver(t);
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['scenario-run.completed'],
  });
  t.equal(endpoint.status, 201, endpoint.text);
  t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);
  const runs = `/api/v1/assistants/${assistant.id}/scenario-runs`;
  t.match(await api(app.url, 'POST', runs, owner.secret, { scenarios: ['nope'] }), {
    status: 400,
    body: { code: 'SCENARIO_UNKNOWN', details: { field: 'scenarios.0' } },
  });
  t.match(await api(app.url, 'POST', runs, owner.secret, { concurrency: 11 }), { status: 400 });

  const { run, results } = await runScenarios(app.url, owner.secret, assistant.id, { concurrency: 3 });
  t.match(run, {
    id: /^srun_/,
    status: 'done',
    scenarioCount: 3,
    completedCount: 3,
    figures: { passRate: 0.6667, passed: 2, failed: 1, errored: 0 },
  });
  t.ok(run.figures.turnLatencyP50Ms >= 0 && run.figures.turnLatencyP95Ms >= run.figures.turnLatencyP50Ms);
  const [price, wrongPrice, order] = results;
  t.match(price, {
    name: 'fact: price',
    status: 'passed',
    conversationId: /^conv_/,
    verdicts: [
      { expectation: { mustSay: '4.99 euros' }, passed: true, evidence: /said "4\.99 euros"/ },
      { passed: true, evidence: /turn latencies \d+ ms/ },
    ],
    transcript: [
      { role: 'caller', text: 'How much does the premium plan cost?' },
      { role: 'assistant', text: /4\.99 euros per month/ },
    ],
  });
  t.match(wrongPrice, {
    status: 'failed',
    verdicts: [
      { expectation: { neverSay: '4.99 euros' }, passed: false, evidence: /said "4\.99 euros" in: ".*premium/ },
    ],
  });
  t.match(order, {
    status: 'passed',
    verdicts: [
      { passed: true, evidence: 'called order_status({"orderId":"12345"})' },
      { passed: true, evidence: /delivered/ },
    ],
    transcript: [
      { role: 'caller' },
      { role: 'tool', text: 'order_status (mocked)', tool: { mocked: true, result: { status: 'delivered' } } },
      { role: 'assistant', text: /delivered/ },
    ],
  });

  const hook = await eventually(
    () => receiver.received.map((r) => JSON.parse(r.body)).find((b) => b.data?.runId === run.id),
    'scenario-run.completed',
  );
  t.match(hook, {
    type: 'scenario-run.completed',
    data: { assistantId: assistant.id, status: 'done', scenarioCount: 3, passRate: 0.6667, passed: 2, failed: 1 },
  });

  // The runs' conversations are of source `test`, and a selection by name runs only those.
  const sources = await app.database.sql<Array<{ source: string }>>`
    select distinct source from conversations where assistant_id = ${assistant.id}`;
  t.same(
    sources.map((s) => s.source),
    ['test'],
  );
  const one = await runScenarios(app.url, owner.secret, assistant.id, { scenarios: ['wrong price'] });
  t.match(one.run, { scenarioCount: 1, figures: { passRate: 0 } });
  const history = await api(app.url, 'GET', runs, owner.secret);
  t.same(
    history.body.runs.map((r: { id: string }) => r.id),
    [one.run.id, run.id],
    'newest first',
  );
  t.equal((await api(app.url, 'GET', `${runs}/srun_nope`, owner.secret)).body.code, 'SCENARIO_RUN_NOT_FOUND');

  // A scenario's history: its results across runs, newest first.
  const wrongId: string = wrong.body.scenario.id;
  const history2 = await api(app.url, 'GET', `${base}/${wrongId}/results`, owner.secret);
  t.equal(history2.status, 200, history2.text);
  t.same(
    history2.body.results.map((r: { runId: string; status: string }) => [r.runId, r.status]),
    [
      [one.run.id, 'failed'],
      [run.id, 'failed'],
    ],
  );
  t.equal((await api(app.url, 'GET', `${base}/scn_nope/results`, owner.secret)).body.code, 'SCENARIO_NOT_FOUND');

  // Deleting a scenario keeps its past results.
  t.match(await api(app.url, 'DELETE', `${base}/${scenarioId}`, owner.secret), { status: 200, body: { ok: true } });
  const kept = await api(app.url, 'GET', `${runs}/${run.id}`, owner.secret);
  t.match(kept.body.results[0], { scenarioId: null, name: 'fact: price', status: 'passed' });
});
