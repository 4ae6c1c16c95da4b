import t from 'tap';
import { startFaultRig } from './helpers.js';
import {
  assertBilledRealTime,
  assertSettledOnce,
  beatUntil,
  endCall,
  FAST_OWNERSHIP,
  FAULT_ENV,
  heartbeatsWhile,
  startCall,
  voiceSetup,
} from './voice.js';

/**
 * Redis: a live call goes on through a Redis restart that loses every key and through Redis
 * outages longer than the ownership record's life (killed, then stalled). Heartbeats say `degraded` while the
 * instance cannot reach Redis; the owner re-asserts its record under a new generation the database grants; the call
 * ends only when the caller ends it, settled once, billed for the connected time.
 */
t.test('a live call survives a Redis restart (data lost), a Redis outage and a Redis stall', async (t) => {
  const rig = await startFaultRig(t, { env: FAULT_ENV, voice: FAST_OWNERSHIP });
  const { app } = rig;
  const { owner, assistant } = await voiceSetup(app);
  const call = await startCall(t, app, owner, assistant);
  const id = call.minted.sessionId;
  const raw = await rig.redis.client();
  const ownerKey = `${app.redisPrefix}voice:owner:${id}`;
  const generationInRedis = async () =>
    JSON.parse((await raw.get(ownerKey)) ?? '{"generation":0}').generation as number;
  const generationInDb = async () =>
    (await rig.database.sql`select owner_generation from voice_sessions where id = ${id}`)[0]!
      .ownerGeneration as number;

  t.equal((await beatUntil(call, 'healthy')).status, 'healthy');
  t.equal(await generationInRedis(), 1, 'the record holds generation 1');

  await t.test('restart: every key lost', async (t) => {
    await rig.redis.restart();
    // Gone, unless the owner's renewal (every few hundred ms here) already re-asserted it under the next generation.
    const after = await raw.get(ownerKey).catch(() => null);
    t.ok(
      after === null || (JSON.parse(after) as { generation: number }).generation > 1,
      `the generation-1 record is gone with the restart (found ${after ?? 'none'})`,
    );
    await beatUntil(call, 'healthy');
    const deadline = Date.now() + 5000;
    while ((await generationInRedis()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.equal(await generationInRedis(), 2, 'the owner re-asserted its record under a new generation');
    t.equal(await generationInDb(), 2, 'granted by the database first (the fence)');
  });

  await t.test('Redis down for 3 s (3x the record life)', async (t) => {
    const seen = await heartbeatsWhile(call, async () => {
      await rig.redis.kill();
      await new Promise((r) => setTimeout(r, 3000));
      await rig.redis.start();
    });
    t.ok(seen.includes('degraded'), `heartbeats said degraded during the outage (${seen.join(', ')})`);
    t.notOk(
      seen.some((s) => s === 'ended' || s === 'lost'),
      'the call never ended',
    );
    t.notOk(
      seen.some((s) => s.startsWith('http_5')),
      'no 5xx to the heartbeat',
    );
    await beatUntil(call, 'healthy');
    const deadline = Date.now() + 5000;
    while ((await generationInRedis()) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.equal(await generationInRedis(), 3, 'the record is back, one generation on');
  });

  await t.test('Redis stalled for 3 s (its records expire meanwhile)', async (t) => {
    const seen = await heartbeatsWhile(call, async () => {
      rig.redisProxy.stall();
      await new Promise((r) => setTimeout(r, 3000));
      rig.redisProxy.heal();
    });
    t.ok(seen.includes('degraded'), `heartbeats said degraded during the stall (${seen.join(', ')})`);
    t.notOk(
      seen.some((s) => s === 'ended' || s === 'lost'),
      'the call never ended',
    );
    await beatUntil(call, 'healthy');
  });

  t.equal(call.media.ws.readyState, call.media.ws.OPEN, "the caller's media socket stayed open throughout");
  const end = await endCall(call);
  const realMs = performance.now() - call.joinedAt;
  t.equal(end.status, 200);
  t.match(end.body, { status: 'ended', endReason: null });
  assertBilledRealTime(t, end.body.billableSeconds, realMs);
  const row = await assertSettledOnce(t, rig.database.sql, call, {
    state: 'ended',
    billableSeconds: end.body.billableSeconds,
  });
  t.equal(row.endReason, null, 'ended by the caller, not by the faults');
});
