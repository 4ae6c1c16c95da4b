import t from 'tap';
import { TEST_SECRET_KEY } from '../helpers/app.js';
import { waitFor } from '../voice/helpers.js';
import { startFaultRig } from './helpers.js';
import { assertBilledRealTime, assertSettledOnce, beat, FAULT_ENV, startCall, voiceSetup } from './voice.js';
import { startKillableInstance } from './killable-instance.js';
import { scratchDir } from '../helpers/scratch.js';

/**
 * Instance kill: the instance running a call is killed -9. The survivor answers 421 until the dead owner's
 * presence key expires (3 s; its ownership record lives 3 s here too), then reports the call lost (control_lost),
 * settled exactly once, billed for the connected time up to the kill (the owner persisted its usage every renewal).
 */
t.test('the owner is killed mid-call: lost, settled once by the survivor, billed to the kill', async (t) => {
  const rig = await startFaultRig(t, { env: FAULT_ENV, voice: { orphanSweepEveryMs: 500 } });
  const survivor = rig.app;
  const owner = await startKillableInstance(t, {
    ...rig.env,
    REDIS_KEY_PREFIX: survivor.redisPrefix,
    SECRET_KEY: TEST_SECRET_KEY,
    INSTANCE_ID: 'instance-doomed',
    DATA_DIR: scratchDir('parley-fault-'),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    VOICE_OWNERSHIP_TTL_SECONDS: '3', // renewed every second
  });
  const { owner: account, assistant } = await voiceSetup(survivor);
  const call = await startCall(t, survivor, account, assistant, owner.url);
  t.equal((await beat(call, owner.url)).body.status, 'healthy', 'the owner answers');
  const wrong = await beat(call, survivor.url);
  t.equal(wrong.status, 421, 'the survivor sends callers to the owner');

  await new Promise((r) => setTimeout(r, 2500));
  await owner.kill();
  const connectedMs = performance.now() - call.joinedAt;

  const lost = await waitFor(
    async () => {
      const res = await beat(call, survivor.url);
      return res.status === 200 ? res.body : undefined;
    },
    "the dead owner's presence to expire",
    15_000,
  );
  t.match(lost, { status: 'lost', endReason: 'control_lost' }, 'then the call is reported lost');
  const end = await Promise.all([1, 2, 3].map(() => survivor.url).map((base) => beat(call, base)));
  t.ok(
    end.every((r) => r.status === 200 && r.body.status === 'lost'),
    'every later answer agrees',
  );
  const row = await assertSettledOnce(t, rig.database.sql, call, { state: 'lost' });
  t.equal(row.endReason, 'control_lost');
  t.equal(row.ownerGeneration, 2, 'settled once (one generation bump by the reaper)');
  // The owner persists usage every renewal (1 s here), in whole seconds: the last second before a kill -9 is
  // unknowable.
  assertBilledRealTime(t, row.billableSeconds, connectedMs, 'billed up to the kill', 2);
});
