import t from 'tap';
import { costByConversation } from '../../src/metering/index.js';
import { bearer, dashboardHeaders, login } from '../helpers/identity.js';
import { startChatSimulator } from '../providers/chat/simulator.js';
import { ownerWithVoice, post, startVoiceApp, voiceAssistant } from '../voice/helpers.js';
import { api, runScenarios } from './helpers.js';

/**
 * Scenario runs (source `test`) stay outside the plan's voice minutes but inside the budget, at their real cost: a
 * chat scenario on a priced model (the loopback OpenAI simulator) and a websocket scenario on the provider simulator
 * (priced per second like a hosted realtime model) show up in the account's spend; once the budget is used up, the
 * same scenarios end with the refusal every other caller gets, and nothing is spent or taken from the voice minutes.
 */
const sim = await startChatSimulator(t);
sim.script({
  kind: 'stream',
  pieces: ['The premium plan', ' costs 4.99 euros.'],
  usage: { prompt_tokens: 1_200, completion_tokens: 900 },
});
const app = await startVoiceApp(t, {
  env: {
    HOSTED_USAGE_ENFORCEMENT: 'enforce',
    CHAT_PROVIDER: 'openai',
    OPENAI_BASE_URL: sim.baseUrl,
    OPENAI_API_KEY: 'sk-upstream-test',
    OPENAI_MODEL: 'gpt-4o-mini',
  },
});
const { sql } = app.database;
/** 1,200 prompt and 900 completion tokens of gpt-4o-mini. */
const CHAT_TURN_MICROS = Math.ceil((1_200 * 150_000 + 900 * 600_000) / 1_000_000);

async function json(path: string, headers: Record<string, string>) {
  const res = await fetch(`${app.url}${path}`, { headers });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as any;
}

/** An owner with a voice assistant and two scenarios: one chat, one websocket call. */
async function ownerWithScenarios() {
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const headers = dashboardHeaders(app.url, await login(app.url, owner.email, owner.password));
  for (const scenario of [
    {
      name: 'price in chat',
      transport: 'chat',
      turns: [{ say: 'How much is premium' }],
      expect: [{ mustSay: '4.99' }],
    },
    {
      name: 'hello by voice',
      transport: 'websocket',
      turns: [{ say: 'Hello, I would like to book a table' }],
      expect: [{ maxTurnLatencyMs: 20_000 }, { endReason: 'client' }],
    },
  ]) {
    const res = await api(app.url, 'POST', `/api/v1/assistants/${assistant.id}/scenarios`, owner.secret, scenario);
    if (res.status !== 201) throw new Error(`scenario refused: ${res.text}`);
  }
  return { owner, assistant, headers };
}

/** The scenario call of a conversation: its source and the seconds it was billed. */
async function callOf(conversationId: string) {
  const [row] = await sql<[{ billableSeconds: number; source: string }]>`
    select billable_seconds, source from voice_sessions where conversation_id = ${conversationId}`;
  return row!;
}

t.test("a scenario run's spend is in the account's usage and budget at its real cost", async (t) => {
  const { owner, assistant, headers } = await ownerWithScenarios();
  const { run, results } = await runScenarios(app.url, owner.secret, assistant.id, { concurrency: 2 }, 90_000);
  t.comment(JSON.stringify(results.map((r) => ({ name: r.name, status: r.status, error: r.error }))));
  t.match(run, { status: 'done', figures: { passed: 2 } });
  const [chat, voice] = results;

  const call = await callOf(voice.conversationId);
  t.equal(call.source, 'test');
  const seconds = call.billableSeconds;
  t.ok(seconds >= 1, 'the scenario call was billed by the second');
  const voiceMicros = seconds * 1_000;
  const total = CHAT_TURN_MICROS + voiceMicros;

  const perConversation = await costByConversation(sql, owner.accountId, [chat.conversationId, voice.conversationId]);
  t.same(
    Object.fromEntries(perConversation.map((c) => [c.conversationId, c.costMicros])),
    { [chat.conversationId]: CHAT_TURN_MICROS, [voice.conversationId]: voiceMicros },
    "each scenario's conversation cost what its tokens and seconds cost",
  );
  const { summary } = await json('/api/v1/account/usage/summary', headers);
  t.match(summary, { consumedMicros: total, reservedMicros: 0, remainingMicros: summary.limitMicros - total });
  t.match(
    summary.voice,
    { voiceSecondsUsed: 0, voiceSecondsReserved: 0, playgroundVoiceSeconds: seconds },
    "none of the plan's voice minutes used: the call's seconds are counted beside the playground's",
  );
  const { budget } = await json('/api/v1/account/budget', headers);
  t.equal(budget.spentMicros, total, 'the budget counts the run');
  const daily = await json('/api/v1/account/usage/daily', headers);
  const bySource = (daily.days as any[]).flatMap((d) => d.bySource);
  t.same(
    bySource.filter((s: any) => s.costMicros > 0).map((s: any) => [s.source, s.costMicros]),
    [['test', total]],
    'the daily roll-up shows it as source test',
  );
});

t.test('with the budget used up, scenarios end with the budget refusal and spend nothing', async (t) => {
  const { owner, assistant, headers } = await ownerWithScenarios();
  // The owner caps the period at nothing: the budget is used up.
  const capped = await fetch(`${app.url}/api/v1/account/budget`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ hardLimitMicros: 0 }),
  });
  t.equal(capped.status, 200);

  // What any other caller gets now: the budget refusal.
  const byKey = await post(
    app.url,
    '/api/v1/chat',
    { assistantId: assistant.id, message: 'Hello' },
    bearer(owner.secret),
  );
  t.match(byKey, { status: 402, body: { code: 'USAGE_LIMIT_REACHED', reason: 'usage_limit' } });
  const refusal = byKey.body.error as string;
  const call = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
    bearer(owner.secret),
  );
  t.match(call, { status: 402, body: { code: 'USAGE_LIMIT_REACHED', reason: 'usage_limit' } });

  const requestsBefore = sim.requests.length;
  const { run, results } = await runScenarios(app.url, owner.secret, assistant.id, { concurrency: 2 }, 90_000);
  t.comment(JSON.stringify(results.map((r) => ({ name: r.name, status: r.status, error: r.error }))));
  t.match(run, { status: 'done', figures: { passed: 0, errored: 2 } });
  for (const result of results)
    t.match(result, { status: 'error', error: refusal }, `${result.name}: ends with the budget refusal`);
  t.equal(sim.requests.length, requestsBefore, 'the priced model was never called');
  const calls = await sql<Array<{ n: number }>>`
    select count(*)::int as n from voice_sessions where assistant_id = ${assistant.id} and billable_seconds > 0`;
  t.equal(calls[0]!.n, 0, 'no call was billed');

  const { summary } = await json('/api/v1/account/usage/summary', headers);
  t.match(summary, { consumedMicros: 0, reservedMicros: 0 }, 'nothing spent');
  t.match(summary.voice, { voiceSecondsUsed: 0, voiceSecondsReserved: 0, playgroundVoiceSeconds: 0 });
});
