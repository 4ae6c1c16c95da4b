import t from 'tap';
import { waitUntil, type ClusterInstance } from '../../scripts/cluster/cluster.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { deleteKeysWithPrefix, uniquePrefix } from '../helpers/store.js';
import { Caller, type EndSeen } from './caller.js';
import { checkLedger } from './ledger.js';
import { startTestCluster } from './setup.js';

// The promise: "a rolling restart of the cluster under load ends no call early when the calls are shorter than the
// drain timeout". Three real instances behind the real HAProxy; calls of 3-5 s start every 500 ms through the proxy for
// the whole time every instance is replaced (cluster.rollingRestart: replacement on a new route key, old one out of the
// mint backend, SIGTERM, drain). Callers do not retry anything: a mint must succeed the first time.
const DRAIN_S = 30;

interface Call {
  caller: Caller;
  mintError?: string;
  /** What the caller saw before it hung up: the service must not have ended anything on its own. */
  beforeEnd?: { over: boolean; mediaClosed: boolean; gateError?: string };
  ended?: EndSeen;
  endError?: string;
}

t.test('a rolling restart of three instances under load ends no call early', { timeout: 180_000 }, async (t) => {
  const prefix = uniquePrefix('rolling');
  t.teardown(() => deleteKeysWithPrefix(prefix));
  const { database, owner, assistant, cluster, output } = await startTestCluster(t, {
    name: 'Rolling',
    redisUrl: TEST_REDIS_URL,
    redisPrefix: prefix,
    env: {
      VOICE_OWNERSHIP_TTL_SECONDS: '5',
      VOICE_DRAIN_TIMEOUT_SECONDS: String(DRAIN_S),
      SHUTDOWN_GRACE_MS: '2000',
    },
  });
  const firstKeys = cluster.instances.map((i) => i.routeKey);
  const calls: Call[] = [];
  t.teardown(() => calls.forEach((c) => c.caller.dispose()));
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** One call: mint, hold it (heartbeats, gate, media) for a few seconds, hang up. */
  const runCall = async (call: Call, holdMs: number) => {
    try {
      await call.caller.start();
    } catch (err) {
      call.mintError = (err as Error).message;
      return;
    }
    await pause(holdMs);
    const c = call.caller;
    call.beforeEnd = { over: c.over !== undefined, mediaClosed: c.mediaClose !== undefined, gateError: c.gateError };
    try {
      call.ended = await c.end();
    } catch (err) {
      call.endError = (err as Error).message;
    }
  };
  let loading = true;
  const running: Array<Promise<void>> = [];
  const load = (async () => {
    for (let n = 0; loading; n++) {
      const call: Call = { caller: new Caller(cluster.url, owner.secret, assistant.publicId) };
      calls.push(call);
      running.push(runCall(call, 3000 + (n % 5) * 500));
      await pause(500);
    }
  })();

  // Which calls were live on an instance at the moment it was told to drain.
  const liveAtDrain = new Map<string, Call[]>();
  await pause(4000);
  const began = Date.now();
  const liveOn = (key: string) =>
    calls.filter((c) => c.caller.routeKey === key && c.caller.controlToken !== '' && c.beforeEnd === undefined);
  // Calls stop starting if the restart fails, so the test ends with its assertion rather than at its timeout.
  t.teardown(() => {
    loading = false;
  });
  const report = await cluster.rollingRestart({
    onStep: async (step) => {
      t.comment(
        `${((Date.now() - began) / 1000).toFixed(1)} s: ${step.phase} ${step.old.routeKey}${'replacement' in step ? ` -> ${step.replacement.routeKey}` : ''}`,
      );
      // The old instance still takes mints until it is told to drain: make sure it has calls to carry through it.
      if (step.phase === 'replacement-up')
        await waitUntil(() => liveOn(step.old.routeKey).length >= 1, 20_000, `a live call on ${step.old.routeKey}`);
      if (step.phase === 'draining') liveAtDrain.set(step.old.routeKey, liveOn(step.old.routeKey));
    },
  });
  await pause(2000);
  loading = false;
  await load;
  await Promise.all(running);

  t.equal(report.length, 3, 'every instance was replaced');
  t.same(
    report.map((r) => r.exitCode),
    [0, 0, 0],
    'each old instance drained and exited cleanly',
  );
  const newKeys = cluster.instances.map((i: ClusterInstance) => i.routeKey);
  t.equal(newKeys.filter((k) => firstKeys.includes(k)).length, 0, 'the replacements run under route keys of their own');
  const states = await cluster.serverStates();
  t.ok(
    newKeys.every((k) => states.parley?.[k] === 'UP' && states.parley_alive?.[k] === 'UP'),
    'the proxy sends work to the replacements',
  );
  t.ok(
    firstKeys.every((k) => states.parley?.[k] === 'MAINT' && states.parley_alive?.[k] === 'MAINT'),
    'and none to the retired instances',
  );

  t.ok(calls.length >= 30, `calls kept starting through the restart (${calls.length})`);
  t.same(
    calls.filter((c) => c.mintError !== undefined).map((c) => c.mintError),
    [],
    'every mint during the restart succeeded at the first try (no client retry)',
  );
  for (const key of firstKeys) {
    t.ok(
      (liveAtDrain.get(key)?.length ?? 0) >= 1,
      `calls were live on ${key} when it began draining (${liveAtDrain.get(key)?.length ?? 0})`,
    );
  }
  t.ok(
    calls.some((c) => newKeys.includes(c.caller.routeKey ?? '')),
    'mints went to the replacements',
  );
  const minted = calls.filter((c) => c.mintError === undefined);
  t.same(
    minted.filter((c) => c.endError !== undefined).map((c) => c.endError),
    [],
    'every hang-up was answered',
  );
  t.same(
    minted
      .filter((c) => c.beforeEnd?.over || c.beforeEnd?.mediaClosed || c.beforeEnd?.gateError !== undefined)
      .map((c) => [c.caller.sessionId, c.beforeEnd]),
    [],
    'no call was ended, lost or cut (media, gate) before its caller hung up',
  );
  t.same(
    minted
      .filter((c) => c.ended?.status !== 'ended' || c.ended.endReason !== null)
      .map((c) => [c.caller.sessionId, c.ended]),
    [],
    "every call ended as its caller chose (status ended, no end reason of the service's)",
  );
  t.equal(
    minted.reduce((n, c) => n + c.caller.count421(), 0),
    0,
    'zero 421s across mints, heartbeats, gates, media and ends',
  );
  t.same(
    minted
      .filter(
        (c) =>
          c.caller.heartbeats.length < 1 ||
          c.caller.heartbeats.some((h) => h.status !== 200 || h.body?.status !== 'healthy'),
      )
      .map((c) => [c.caller.sessionId, c.caller.heartbeats]),
    [],
    'every call heartbeated, and every heartbeat answered healthy',
  );
  t.ok(
    minted.every((c) => c.caller.mediaFramesSent > 10 && c.caller.gateLines.at(-1)?.type === 'end'),
    'every call carried audio and its gate stream ran to its end line',
  );

  const seen = new Map<string, EndSeen>();
  for (const c of minted) if (c.ended !== undefined) seen.set(c.caller.sessionId, c.ended);
  const strays = await checkLedger(t, database.sql, owner.accountId, seen);
  t.same(strays, [], 'no reservation outside the calls the callers held');
  if (t.passing() === false)
    t.comment(
      output
        .filter((l) => /error|warn|ALERT/i.test(l))
        .slice(-40)
        .join('\n'),
    );
});
