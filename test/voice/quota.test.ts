import t from 'tap';
import { Meter, reserveVoiceSeconds, settleVoiceSeconds } from '../../src/metering/index.js';
import { meteredVoiceQuota, type VoiceQuotaRequest } from '../../src/voice/index.js';
import type { TestApp } from '../helpers/app.js';
import { captureLogger } from '../helpers/log.js';
import { balanceOf } from '../helpers/metering.js';
import type { TestOwner } from '../helpers/identity.js';
import {
  endWithKey,
  heartbeat,
  heartbeatUntil,
  mintAsWidget,
  mintWithKey,
  ORIGIN,
  ownerWithVoice,
  post,
  startVoiceApp,
  voiceAssistant,
  waitFor,
  type Minted,
} from './helpers.js';
import { mediaUrl, openMedia } from './media-client.js';
import { bearer, dashboardHeaders, login } from '../helpers/identity.js';

/**
 * Voice minutes and concurrency through the real quota (metering's voice grants, real Postgres), against the real
 * provider simulator. Free plan: 10 minutes (600 s), 1 concurrent call.
 */

const ENFORCE = { HOSTED_USAGE_ENFORCEMENT: 'enforce' };

function meterOf(app: TestApp): Meter {
  return new Meter({ sql: app.database.sql, config: app.config, log: captureLogger().log });
}

/** Uses up `seconds` of the account's voice minutes this period, as earlier calls would have. */
async function useMinutes(app: TestApp, owner: TestOwner, seconds: number): Promise<void> {
  const meter = meterOf(app);
  let left = seconds;
  let n = 0;
  while (left > 0) {
    const grant = await reserveVoiceSeconds(meter, {
      accountId: owner.accountId,
      sessionId: `vs_earlier${n++}`,
      source: 'api',
      audience: 'owner',
      first: false,
      requestedSeconds: Math.min(300, left),
    });
    await settleVoiceSeconds(meter, grant, grant.seconds);
    left -= grant.seconds;
  }
}

t.test(
  'minutes exhausted at mint: 402 voice_minutes_exhausted for API keys, 403 voice_unavailable for the widget',
  async (t) => {
    const app = await startVoiceApp(t, { env: ENFORCE });
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    await useMinutes(app, owner, 580); // 20 s left: below the 30 s a mint needs

    const byKey = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: assistant.publicId, capabilities: ['playback_gate'] },
      bearer(owner.secret),
    );
    t.equal(byKey.status, 402);
    t.match(byKey.body, {
      code: 'USAGE_VOICE_MINUTES_EXHAUSTED',
      reason: 'voice_minutes_exhausted',
      details: { voiceSecondsLimit: 600, voiceSecondsUsed: 580 },
    });

    const byWidget = await mintAsWidget(app, assistant);
    t.equal(byWidget.status, 403);
    t.same(Object.keys(byWidget.body).sort(), ['code', 'error', 'reason', 'requestId']);
    t.match(byWidget.body, { code: 'VOICE_UNAVAILABLE', reason: 'voice_unavailable' });
    t.notMatch(
      JSON.stringify(byWidget.body),
      /minute|usage|plan|limit|second/i,
      'the visitor learns nothing about usage',
    );

    const [{ n }] = (await app.database
      .sql`select count(*)::int as n from voice_sessions where account_id = ${owner.accountId}`) as any;
    t.equal(n, 0, 'refused before any provider session or row');

    // Shadow mode records, never refuses.
    const shadow = await startVoiceApp(t, {
      database: app.database,
      redisPrefix: app.redisPrefix,
      env: { HOSTED_USAGE_ENFORCEMENT: 'shadow' },
    });
    const minted = await mintWithKey(shadow, owner, assistant);
    t.ok(minted.sessionId, 'shadow: the same account may call');
    await endWithKey(shadow, owner, minted.sessionId);
  },
);

t.test(
  'exhausted mid-call: the service ends it usage_limit (widget: voice_unavailable); the overrun is billed',
  async (t) => {
    const app = await startVoiceApp(t, { env: ENFORCE, voice: { limits: { quotaCheckEveryMs: 1000 } } });
    const owner = await ownerWithVoice(app);
    // The simulator's usage jumps by 120 s at its second usage tick (about 2 s into the call).
    const assistant = await voiceAssistant(app, owner, { instructions: 'Be brief. [sim:usage-jump=120]' });
    await useMinutes(app, owner, 540); // 60 s left: the first grant is 60 s

    const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
    const media = await openMedia(mediaUrl(app, minted));
    const [grant] = await app.database
      .sql`select reserved_seconds, status from usage_reservations where voice_session_id = ${minted.sessionId}`;
    t.match(grant, { reservedSeconds: 60, status: 'open' }, 'the grant is what was left');
    const ended = await waitFor(
      async () => {
        app.clock.advance(1000);
        const res = await heartbeat(app, minted);
        return res.body.status === 'ended' ? res.body : undefined;
      },
      'the usage_limit end',
      15_000,
    );
    t.equal(ended.endReason, 'usage_limit');
    t.same(await media.waitText((e) => e.type === 'ended', 'ended'), { type: 'ended', endReason: 'usage_limit' });
    const end = await endWithKey(app, owner, minted.sessionId);
    t.match(end.body, { status: 'ended', endReason: 'usage_limit' });
    t.ok(end.body.billableSeconds >= 120, "the provider's figure, jump included");
    const balance = await balanceOf(app.database.sql, owner.accountId);
    t.equal(balance!.voiceSecondsUsed, 540 + end.body.billableSeconds, 'billed once, overrun included');
    t.equal(balance!.voiceSecondsReserved, 0);

    // Widget caller: the same end, presented neutrally.
    const fresh = await ownerWithVoice(app);
    const widgetAssistant = await voiceAssistant(app, fresh, { instructions: 'Be brief. [sim:usage-jump=120]' });
    await useMinutes(app, fresh, 540);
    const widget = (await mintAsWidget(app, widgetAssistant, { capabilities: ['playback_gate'] })).body as Minted;
    const widgetMedia = await openMedia(mediaUrl(app, widget));
    const widgetEnd = await waitFor(
      async () => {
        app.clock.advance(1000);
        const res = await heartbeat(app, widget);
        return res.body.status === 'ended' ? res.body : undefined;
      },
      'the widget end',
      15_000,
    );
    t.equal(widgetEnd.endReason, 'voice_unavailable');
    t.same(await widgetMedia.waitText((e) => e.type === 'ended', 'ended'), {
      type: 'ended',
      endReason: 'voice_unavailable',
    });
    const stored = await waitFor(async () => {
      const [row] = await app.database.sql`select state, end_reason from voice_sessions where id = ${widget.sessionId}`;
      return row!.state === 'ended' ? row!.endReason : undefined;
    }, 'the settlement');
    t.equal(stored, 'usage_limit', 'stored as what happened');
  },
);

t.test('a long call renews its grant block by block and settles exactly what it used', async (t) => {
  const app = await startVoiceApp(t, { env: ENFORCE });
  const owner = await ownerWithVoice(app);
  await app.database.sql`update hosting_accounts set plan_code = 'pro' where account_id = ${owner.accountId}`; // 600 minutes, 5 calls
  const quota = meteredVoiceQuota(meterOf(app), { maxConcurrentSessions: 0, log: captureLogger().log });
  const request: VoiceQuotaRequest = {
    accountId: owner.accountId,
    sessionId: 'vs_longcall0001',
    assistantId: 'x',
    source: 'api',
    keyless: false,
  };
  await quota.admit(request);
  const grants = () => app.database.sql<{ reservedSeconds: number; status: string }[]>`
    select reserved_seconds, status from usage_reservations where voice_session_id = ${request.sessionId} order by created_at, id`;
  t.equal(await quota.extend(request, 100), true);
  t.same(
    (await grants()).map((g) => g.status),
    ['open'],
    'far from the end of the grant: nothing to do',
  );
  t.equal(await quota.extend(request, 250), true);
  t.same(
    await grants(),
    [
      { reservedSeconds: 300, status: 'open' },
      { reservedSeconds: 300, status: 'open' },
    ],
    '60 s before the end: the next 300 s',
  );
  t.equal(await quota.extend(request, 310), true);
  t.same(
    (await grants()).map((g) => g.status),
    ['settled', 'open'],
    'the used-up grant is settled at its size',
  );
  t.equal((await balanceOf(app.database.sql, owner.accountId))!.voiceSecondsReserved, 300);
  await quota.settle(request, 432, true);
  t.same(
    (await grants()).map((g) => g.status),
    ['settled', 'settled'],
  );
  const balance = await balanceOf(app.database.sql, owner.accountId);
  t.equal(balance!.voiceSecondsUsed, 432, 'exactly what the provider counted');
  t.equal(balance!.voiceSecondsReserved, 0);
  t.equal(quota.localCalls, 0);
});

t.test(
  "concurrency: the plan's calls per account (429 vs widget 403), and the per-instance cap in every mode",
  async (t) => {
    const app = await startVoiceApp(t, { env: ENFORCE });
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    const first = await mintWithKey(app, owner, assistant);
    const second = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: assistant.publicId, capabilities: ['playback_gate'] },
      bearer(owner.secret),
    );
    t.equal(second.status, 429);
    t.match(second.body, {
      code: 'USAGE_VOICE_CONCURRENCY_LIMIT',
      reason: 'voice_concurrency_limit',
      details: { voiceConcurrentCalls: 1 },
    });
    const widget = await mintAsWidget(app, assistant);
    t.equal(widget.status, 403);
    t.match(widget.body, { code: 'VOICE_UNAVAILABLE', reason: 'voice_unavailable' });
    await endWithKey(app, owner, first.sessionId);
    const again = await mintWithKey(app, owner, assistant);
    t.ok(again.sessionId, 'the call ended: its slot is free');
    await endWithKey(app, owner, again.sessionId);

    // Shadow mode with VOICE_MAX_CONCURRENT_SESSIONS=1: the account limit is not enforced, the instance cap is.
    const capped = await startVoiceApp(t, {
      env: { HOSTED_USAGE_ENFORCEMENT: 'shadow', VOICE_MAX_CONCURRENT_SESSIONS: '1' },
    });
    const o2 = await ownerWithVoice(capped);
    const a2 = await voiceAssistant(capped, o2);
    const one = await mintWithKey(capped, o2, a2);
    const two = await post(
      capped.url,
      '/api/v1/voice/sessions',
      { assistantId: a2.publicId, capabilities: ['playback_gate'] },
      bearer(o2.secret),
    );
    t.equal(two.status, 429);
    t.match(two.body, { code: 'VOICE_INSTANCE_CONCURRENCY_LIMIT', reason: 'voice_concurrency_limit' });
    t.equal(two.headers.get('retry-after'), '5');
    t.match((await mintAsWidget(capped, a2)).body, { code: 'VOICE_UNAVAILABLE', reason: 'voice_unavailable' });
    await endWithKey(capped, o2, one.sessionId);
    const three = await mintWithKey(capped, o2, a2);
    t.ok(three.sessionId, 'a slot on the instance is free again');
    await endWithKey(capped, o2, three.sessionId);

    const shadow = await startVoiceApp(t, { env: { HOSTED_USAGE_ENFORCEMENT: 'shadow' } });
    const o3 = await ownerWithVoice(shadow);
    const a3 = await voiceAssistant(shadow, o3);
    const x = await mintWithKey(shadow, o3, a3);
    const y = await mintWithKey(shadow, o3, a3);
    t.ok(x.sessionId && y.sessionId, 'shadow: two calls on a one-call plan are recorded, not refused');
    const open = await shadow.database
      .sql`select count(distinct voice_session_id)::int as n from usage_reservations where account_id = ${o3.accountId} and status = 'open'`;
    t.equal(open[0]!.n, 2, 'both hold (recorded) grants');
    await endWithKey(shadow, o3, x.sessionId);
    await endWithKey(shadow, o3, y.sessionId);
  },
);

t.test(
  'playground voice is granted only to the signed-in owner (same origin): exempt from the minutes, counted as playground seconds',
  async (t) => {
    const app = await startVoiceApp(t, { env: ENFORCE });
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    await useMinutes(app, owner, 600);
    const cookie = await login(app.url, owner.email, owner.password);

    // Asking for playground grants nothing: a keyless caller is a widget visitor, a key is api, a cookie from another
    // origin is ignored (keyless). All are refused here because the minutes are used up.
    const keyless = await mintAsWidget(app, assistant, { source: 'playground', visitorId: 'playground-owner-1' });
    t.equal(keyless.status, 403, 'keyless + playground: treated as the widget');
    t.match(keyless.body, { code: 'VOICE_UNAVAILABLE', reason: 'voice_unavailable' });
    const byKey = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: assistant.publicId, capabilities: ['playback_gate'], source: 'playground' },
      bearer(owner.secret),
    );
    t.equal(byKey.status, 402, 'API key + playground: treated as api');
    t.match(byKey.body, { reason: 'voice_minutes_exhausted' });
    const crossSite = await post(
      app.url,
      '/api/v1/voice/sessions',
      {
        assistantId: assistant.publicId,
        capabilities: ['heartbeat', 'playback_gate'],
        recordingConsent: true,
        visitorId: 'playground-owner-1',
        source: 'playground',
      },
      { cookie, origin: ORIGIN },
    );
    t.equal(crossSite.status, 403, "the owner's cookie sent from another origin does not make a playground caller");
    const [{ n }] = (await app.database
      .sql`select count(*)::int as n from voice_sessions where account_id = ${owner.accountId}`) as any;
    t.equal(n, 0, 'no session was started for any of them');

    // The signed-in owner on Parley's own origin: playground, exempt, counted as playground seconds.
    const res = await post(
      app.url,
      '/api/v1/voice/sessions',
      {
        assistantId: assistant.id,
        capabilities: ['heartbeat', 'playback_gate'],
        recordingConsent: true,
        source: 'playground',
      },
      dashboardHeaders(app.url, cookie),
    );
    t.equal(res.status, 200, 'minutes used up, the playground still works');
    const minted = res.body as Minted;
    const [row] = await app.database.sql`select source from voice_sessions where id = ${minted.sessionId}`;
    t.equal(row!.source, 'playground');
    await openMedia(mediaUrl(app, minted)); // only time with a connected caller is billed
    app.clock.advance(1000);
    await new Promise((r) => setTimeout(r, 1100));
    const end = await post(
      app.url,
      `/api/v1/voice/sessions/${minted.sessionId}/end`,
      {},
      dashboardHeaders(app.url, cookie),
    );
    t.equal(end.status, 200);
    const balance = await balanceOf(app.database.sql, owner.accountId);
    t.equal(balance!.voiceSecondsUsed, 600, 'not counted toward the minutes');
    t.equal(balance!.playgroundVoiceSeconds, end.body.billableSeconds, 'but reported as playground seconds');
    t.ok(end.body.billableSeconds >= 1);

    const strict = await startVoiceApp(t, {
      database: app.database,
      redisPrefix: app.redisPrefix,
      env: { ...ENFORCE, VOICE_QUOTA_EXEMPT_PLAYGROUND: 'false' },
    });
    const strictCookie = await login(strict.url, owner.email, owner.password);
    const refused = await post(
      strict.url,
      '/api/v1/voice/sessions',
      {
        assistantId: assistant.id,
        capabilities: ['heartbeat', 'playback_gate'],
        recordingConsent: true,
        source: 'playground',
      },
      dashboardHeaders(strict.url, strictCookie),
    );
    t.equal(refused.status, 402, 'not exempt: the owner is told the real reason');
    t.match(refused.body, { reason: 'voice_minutes_exhausted' });
  },
);

t.test('settled exactly once: end twice, and a call whose instance died', async (t) => {
  const app = await startVoiceApp(t, { env: ENFORCE });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const minted = await mintWithKey(app, owner, assistant);
  await new Promise((r) => setTimeout(r, 1100));
  const [a, b] = await Promise.all([
    endWithKey(app, owner, minted.sessionId),
    endWithKey(app, owner, minted.sessionId),
  ]);
  t.same(a.body, b.body, 'both callers get the one final answer');
  const again = await endWithKey(app, owner, minted.sessionId);
  t.same(again.body, a.body);
  const events = await app.database
    .sql`select outcome, units from usage_events e join usage_reservations r on r.id = e.reservation_id where r.voice_session_id = ${minted.sessionId}`;
  t.same(
    events.map((e) => e.outcome),
    ['settled'],
    'one usage event',
  );
  t.equal(
    (await balanceOf(app.database.sql, owner.accountId))!.voiceSecondsUsed,
    a.body.billableSeconds,
    'billed once',
  );

  // The instance holding a two-grant call dies (its quota's memory with it); another instance settles it from the
  // grants recorded in the database, once, however often it is asked.
  const dead = meteredVoiceQuota(meterOf(app), { maxConcurrentSessions: 0, log: captureLogger().log });
  const survivor = meteredVoiceQuota(meterOf(app), { maxConcurrentSessions: 0, log: captureLogger().log });
  const owner2 = await ownerWithVoice(app);
  await app.database.sql`update hosting_accounts set plan_code = 'pro' where account_id = ${owner2.accountId}`;
  const request: VoiceQuotaRequest = {
    accountId: owner2.accountId,
    sessionId: 'vs_orphaned0001',
    assistantId: 'x',
    source: 'api',
    keyless: false,
  };
  await dead.admit(request);
  await dead.extend(request, 250); // a second grant
  await dead.extend(request, 320); // the first settled at 300
  await survivor.settle(request, 345, false);
  await survivor.settle(request, 345, false);
  const rows = await app.database
    .sql`select status from usage_reservations where voice_session_id = ${request.sessionId}`;
  t.same(
    rows.map((r) => r.status),
    ['settled', 'settled'],
  );
  const balance = await balanceOf(app.database.sql, owner2.accountId);
  t.equal(balance!.voiceSecondsUsed, 345, 'billed once: 300 by the owner, 45 by the survivor');
  t.equal(balance!.voiceSecondsReserved, 0);
});
