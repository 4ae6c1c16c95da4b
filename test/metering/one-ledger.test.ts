import t from 'tap';
import { costByConversation, costByVoiceCall, Meter } from '../../src/metering/index.js';
import { bearer, dashboardHeaders, login, type TestOwner } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { startChatSimulator } from '../providers/chat/simulator.js';
import {
  endWithKey,
  heartbeat,
  mintAsWidget,
  mintWithKey,
  ownerWithVoice,
  post,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from '../voice/helpers.js';
import { mediaUrl, openMedia, speechFrames } from '../voice/media-client.js';

/**
 * One set of figures: a chat turn (a priced model, through the loopback OpenAI simulator), an ingestion and a voice
 * call (the provider simulator) on one account, then every spend figure the owner can read (budget used, the daily
 * roll-up with its by-assistant and by-source splits, by-assistant, the forecast, the budget, per conversation and
 * per call) must agree to the micro-dollar. Then the hard stop: a hard limit lowered under a live call's feet ends it
 * `usage_limit` within one heartbeat interval, and new paid work is refused.
 */
const sim = await startChatSimulator(t);
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

async function json(path: string, headers: Record<string, string>) {
  const res = await fetch(`${app.url}${path}`, { headers });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as any;
}

async function chat(owner: TestOwner, assistantId: string) {
  const res = await post(
    app.url,
    '/api/v1/chat',
    { assistantId, message: 'What are your hours?' },
    bearer(owner.secret),
  );
  return res;
}

t.test('chat, ingestion and a voice call: every spend figure agrees to the micro', async (t) => {
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const cookie = await login(app.url, owner.email, owner.password);
  const headers = dashboardHeaders(app.url, cookie);

  // A chat turn on a priced model: 42 prompt and 900 completion tokens as the simulator reports them.
  sim.script({
    kind: 'stream',
    pieces: ['We open', ' at nine.'],
    usage: { prompt_tokens: 1_200, completion_tokens: 900 },
  });
  const turn = await chat(owner, assistant.id);
  t.equal(turn.status, 200, JSON.stringify(turn.body));
  const chatConversation = turn.body.conversationId as string;

  // An ingestion, through the dashboard and the app's own worker.
  const text = Array.from({ length: 40 }, (_, i) => `Section ${i}. Opening hours and returns, paragraph ${i}.`).join(
    '\n\n',
  );
  const added = await fetch(`${app.url}/api/assistants/${assistant.id}/sources`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ type: 'text', name: 'Handbook', text }),
  });
  t.equal(added.status, 201);
  await waitFor(async () => {
    const [open] = await sql<[{ n: number }]>`
      select count(*)::int as n from usage_reservations where account_id = ${owner.accountId} and kind = 'ingestion' and status = 'settled'`;
    return open!.n > 0 ? true : undefined;
  }, 'the ingestion to be settled');

  // A voice call: speech in, an answer out, then the caller hangs up.
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  for (const frame of speechFrames(40)) media.send(frame);
  for (let i = 0; i < 40; i++) media.send(Buffer.alloc(960));
  await media.waitText((e) => e.type === 'transcript' && e.role === 'assistant', "the assistant's words");
  const end = await endWithKey(app, owner, minted.sessionId);
  t.match(end.body, { status: 'ended', usageFinalized: true });
  const seconds = end.body.billableSeconds as number;
  t.ok(seconds >= 1, 'the call was billed');

  // What each piece cost, from what was stored where it happened.
  const [message] = await sql<[{ costMicros: number }]>`
    select cost_micros from messages where conversation_id = ${chatConversation} and role = 'assistant'`;
  const chatCost = Number(message!.costMicros);
  t.equal(chatCost, Math.ceil((1_200 * 150_000 + 900 * 600_000) / 1_000_000), 'the answer is priced from its tokens');
  const [ingestion] = await sql<[{ cost: number }]>`
    select sum(cost_micros)::int8 as cost from usage_events where account_id = ${owner.accountId} and kind = 'ingestion'`;
  const ingestionCost = Number(ingestion!.cost);
  t.equal(ingestionCost, 0, 'the ingestion ran on this machine: recorded, priced $0');
  const voiceCost = seconds * 1_000;
  const total = chatCost + ingestionCost + voiceCost;

  const { summary } = await json('/api/v1/account/usage/summary', headers);
  t.equal(summary.consumedMicros, total, 'budget used: chat + ingestion + voice');
  t.equal(summary.reservedMicros, 0, 'nothing is held any more');

  const daily = await json('/api/v1/account/usage/daily', headers);
  t.equal(daily.currentPeriodOnly, true);
  t.equal(daily.totalMicros, total, 'the daily roll-up adds up to budget used');
  const days = daily.days as any[];
  t.equal(
    days.reduce((n, d) => n + d.costMicros, 0),
    total,
    'the days add up',
  );
  const sumOf = (key: 'byAssistant' | 'bySource' | 'byKind') =>
    days.reduce((n, d) => n + d[key].reduce((m: number, e: any) => m + e.costMicros, 0), 0);
  t.equal(sumOf('byAssistant'), total, 'by assistant per day adds up');
  t.equal(sumOf('bySource'), total, 'by source per day adds up');
  const kinds = Object.fromEntries(
    days.flatMap((d) => d.byKind).map((k: any) => [k.kind, k.costMicros]) as Array<[string, number]>,
  );
  t.same(kinds, { chat: chatCost, ingestion: ingestionCost, voice: voiceCost }, 'each kind where it happened');
  t.equal(
    days.reduce((n, d) => n + d.voiceSeconds, 0),
    seconds,
    'the voice seconds per day are the call',
  );

  const byAssistant = await json('/api/v1/account/usage/by-assistant', headers);
  t.equal(
    byAssistant.assistants.reduce((n: number, a: any) => n + a.costMicros, 0),
    total,
    'the by-assistant report agrees',
  );
  const mine = byAssistant.assistants.find((a: any) => a.assistantId === assistant.id);
  t.equal(mine?.costMicros, total, 'all of it on the one assistant');

  const { forecast } = await json('/api/v1/account/usage/forecast', headers);
  t.equal(forecast.spentMicros, total, 'the forecast starts from the same spend');
  t.ok(forecast.projectedMicros >= total);
  t.equal(forecast.voice.secondsUsed, seconds);
  const { budget } = await json('/api/v1/account/budget', headers);
  t.equal(budget.spentMicros, total, 'the budget page agrees');

  const perConversation = await costByConversation(sql, owner.accountId, [chatConversation, minted.conversationId]);
  t.same(
    Object.fromEntries(perConversation.map((c) => [c.conversationId, c.costMicros])),
    { [chatConversation]: chatCost, [minted.conversationId]: voiceCost },
    'per conversation: the chat turn, and the call',
  );
  t.same(await costByVoiceCall(sql, owner.accountId, [minted.sessionId]), [
    { sessionId: minted.sessionId, costMicros: voiceCost },
  ]);
  t.same(await costByConversation(sql, 'acct_someone_else', [chatConversation]), [], 'another account sees nothing');
});

t.test('hard stop: a live call ends usage_limit within one heartbeat interval; new paid work is refused', async (t) => {
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const headers = dashboardHeaders(app.url, await login(app.url, owner.email, owner.password));
  const meter = new Meter({ sql, config: app.config, log: captureLogger().log });
  const earlier = await meter.admit({
    accountId: owner.accountId,
    kind: 'chat',
    source: 'api',
    audience: 'owner',
    estimateMicros: 10_000,
  });
  await meter.settle(earlier, { actualMicros: 10_000 });

  const minted = await mintWithKey(app, owner, assistant);
  t.equal(minted.heartbeatIntervalMs, app.config.VOICE_HEARTBEAT_INTERVAL_MS);
  await openMedia(mediaUrl(app, minted));
  t.equal((await heartbeat(app, minted)).body.status, 'healthy');

  // The owner caps the period at what is already spent.
  const res = await fetch(`${app.url}/api/v1/account/budget`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ hardLimitMicros: 10_000 }),
  });
  t.equal(res.status, 200);
  app.clock.advance(app.config.VOICE_HEARTBEAT_INTERVAL_MS);
  const ended = await waitFor(async () => {
    const beat = await heartbeat(app, minted);
    return beat.body.status === 'ended' ? beat.body : undefined;
  }, 'the call to end');
  t.equal(ended.endReason, 'usage_limit');

  const turn = await chat(owner, assistant.id);
  t.equal(turn.status, 402, 'chat by API key: 402');
  t.equal(turn.body.reason, 'usage_limit');
  const again = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
    bearer(owner.secret),
  );
  t.equal(again.status, 402, 'a new call by API key: 402');
  t.equal(again.body.reason, 'usage_limit');
  const widget = await mintAsWidget(app, assistant);
  t.equal(widget.status, 403);
  t.match(widget.body, { reason: 'voice_unavailable' });
  t.notMatch(JSON.stringify(widget.body), /budget|usage|plan|limit|billing/i, 'the visitor hears nothing of money');
});
