import t from 'tap';
import { reserveVoiceSeconds, settleVoiceSeconds } from '../../src/metering/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, login } from '../helpers/identity.js';
import { createTestMeter } from '../helpers/metering.js';

const app = await startTestApp(t, { env: { HOSTED_USAGE_ENFORCEMENT: 'enforce' } });
const { sql } = app.database;
const owner = await createOwner(sql);
const other = await createOwner(sql);
const cookie = await login(app.url, owner.email, owner.password);
const get = (path: string, headers: Record<string, string> = { cookie }) => fetch(`${app.url}${path}`, { headers });

t.test('usage routes need a dashboard session; API keys are refused', async (t) => {
  for (const path of ['summary', 'limits', 'by-assistant', 'recent']) {
    let res = await get(`/api/v1/account/usage/${path}`, {});
    t.equal(res.status, 401, `${path}: no session`);
    await res.arrayBuffer();
    res = await get(`/api/v1/account/usage/${path}`, bearer(owner.secret));
    t.equal(res.status, 401, `${path}: an API key is not a session`);
    await res.arrayBuffer();
  }
});

t.test('usage routes are not in the v1 OpenAPI document', async (t) => {
  const doc = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
  const leaked = Object.keys(doc.paths).filter(
    (p) => p.includes('/account/') || p.includes('/admin') || p.includes('webhooks'),
  );
  t.same(leaked, []);
});

t.test('summary, limits, by-assistant and recent show what was metered, for this account only', async (t) => {
  const { meter } = createTestMeter(sql);
  const r1 = await meter.admit({
    accountId: owner.accountId,
    kind: 'chat',
    source: 'api',
    audience: 'owner',
    estimateMicros: 50_000,
    assistantId: 'asst_one',
  });
  await meter.settle(r1, { model: 'gpt-4o-mini', inputTokens: 2_000, outputTokens: 500 });
  const r2 = await meter.admit({
    accountId: owner.accountId,
    kind: 'ingestion',
    source: 'dashboard',
    audience: 'owner',
    estimateMicros: 400,
    assistantId: 'asst_two',
  });
  await meter.settle(r2, { actualMicros: 400, units: 20 });
  await meter.admit({
    accountId: owner.accountId,
    kind: 'chat',
    source: 'widget',
    audience: 'visitor',
    estimateMicros: 10_000,
    assistantId: 'asst_one',
  });
  const grant = await reserveVoiceSeconds(meter, {
    accountId: owner.accountId,
    sessionId: 'vs_sum',
    source: 'api',
    audience: 'owner',
    first: true,
  });
  await settleVoiceSeconds(meter, grant, 42);
  const pg = await reserveVoiceSeconds(meter, {
    accountId: owner.accountId,
    sessionId: 'vs_pg',
    source: 'playground',
    audience: 'owner',
    first: true,
    requestedSeconds: 60,
  });
  await settleVoiceSeconds(meter, pg, 17);
  await meter.settle(
    await meter.admit({
      accountId: other.accountId,
      kind: 'chat',
      source: 'api',
      audience: 'owner',
      estimateMicros: 9_999,
    }),
    { actualMicros: 9_999 },
  );

  const summary = (await (await get('/api/v1/account/usage/summary')).json()) as { summary: Record<string, unknown> };
  t.match(summary.summary, {
    accountId: owner.accountId,
    planCode: 'free',
    status: 'active',
    limitMicros: 1_000_000,
    // Chat, ingestion and both calls' voice seconds (42 s and 17 s at 1,000 micros): one ledger, voice included.
    consumedMicros: 600 + 400 + 42_000 + 17_000,
    reservedMicros: 10_000,
    remainingMicros: 1_000_000 - 60_000 - 10_000,
    requestCount: 2,
    monthlyRequestCap: 75,
    enforcement: 'enforce',
    voice: { voiceSecondsUsed: 42, voiceSecondsLimit: 600, voiceSecondsReserved: 0, playgroundVoiceSeconds: 17 },
  });

  const limits = (await (await get('/api/v1/account/usage/limits')).json()) as { limits: Record<string, unknown> };
  t.match(limits.limits, {
    planCode: 'free',
    budgetMicros: 1_000_000,
    maxAssistants: 1,
    monthlyRequestCap: 75,
    evalsEnabled: false,
    voiceMinutes: 10,
    voiceConcurrentCalls: 1,
  });

  const by = (await (await get('/api/v1/account/usage/by-assistant')).json()) as {
    assistants: Array<{ assistantId: string; costMicros: number; requestCount: number }>;
  };
  t.same(
    by.assistants.filter((a) => a.assistantId !== null).map((a) => [a.assistantId, a.costMicros, a.requestCount]),
    [
      ['asst_one', 600, 1],
      ['asst_two', 400, 0],
    ],
  );

  const recent = (await (await get('/api/v1/account/usage/recent?limit=10')).json()) as {
    events: Array<{ kind: string; costMicros: number }>;
  };
  t.equal(recent.events.length, 4, 'settled chat, ingestion and two voice grants; the open request has no event yet');
  t.notOk(
    recent.events.some((e) => e.costMicros === 9_999),
    "another account's usage never shows",
  );
  const bad = await get('/api/v1/account/usage/recent?limit=0');
  t.equal(bad.status, 400);
  await bad.arrayBuffer();
});
