import t from 'tap';
import { startFaultRig } from './helpers.js';
import {
  assertBilledRealTime,
  assertSettledOnce,
  beatUntil,
  endCall,
  FAULT_ENV,
  heartbeatsWhile,
  startCall,
  voiceSetup,
} from './voice.js';

/**
 * The outage as long as an operator would see it: a 60 s Redis outage with the production ownership timings (renewed
 * every 5 s, expiring after 15 s). The one long scenario of the suite; the others shorten the timings to show the same
 * in seconds.
 */
t.test('a live call goes on through a 60 s Redis outage (production ownership timings)', async (t) => {
  const rig = await startFaultRig(t, { env: FAULT_ENV });
  const { app } = rig;
  const { owner, assistant } = await voiceSetup(app);
  const call = await startCall(t, app, owner, assistant);
  await beatUntil(call, 'healthy');
  const raw = await rig.redis.client();
  const ownerKey = `${app.redisPrefix}voice:owner:${call.minted.sessionId}`;

  const seen = await heartbeatsWhile(call, async () => {
    await rig.redis.kill();
    await new Promise((r) => setTimeout(r, 60_000));
    await rig.redis.start(); // empty: the record is gone
  });
  t.ok(
    seen.filter((s) => s === 'degraded').length >= 40,
    `degraded through the outage (${seen.filter((s) => s === 'degraded').length} of ${seen.length} heartbeats)`,
  );
  t.notOk(
    seen.some((s) => s === 'ended' || s === 'lost' || s.startsWith('http_5')),
    'never ended, lost or 5xx',
  );
  await beatUntil(call, 'healthy', 15_000);
  const deadline = Date.now() + 15_000;
  while ((await raw.get(ownerKey).catch(() => null)) === null && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 250));
  t.match(
    JSON.parse((await raw.get(ownerKey)) ?? '{}'),
    { instanceId: app.config.instanceId, generation: 2 },
    'the owner re-asserted its record, one generation on',
  );

  const end = await endCall(call);
  const realMs = performance.now() - call.joinedAt;
  t.equal(end.status, 200);
  t.match(end.body, { status: 'ended', endReason: null });
  assertBilledRealTime(t, end.body.billableSeconds, realMs);
  await assertSettledOnce(t, rig.database.sql, call, { state: 'ended', billableSeconds: end.body.billableSeconds });
});
