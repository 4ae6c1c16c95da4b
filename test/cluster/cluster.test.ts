import t from 'tap';
import { waitUntil, type Cluster } from '../../scripts/cluster/cluster.js';
import { startRedisProcess } from '../helpers/redis-process.js';
import { uniquePrefix } from '../helpers/store.js';
import { Caller, type EndSeen } from './caller.js';
import { checkLedger } from './ledger.js';
import { startTestCluster } from './setup.js';

// Three real instances behind the real HAProxy (deploy/haproxy.cfg's rules), one Postgres database and one
// Redis prefix of their own. Knobs keep it short: 3 s ownership records, a 1 s orphan sweep, 1 s heartbeats.
const OWNERSHIP_TTL_S = 3;
const DRAIN_S = 12;
const METRICS_TOKEN = 'cluster-metrics-token-0123456789';

/** Sum of one sample (name + exact labels) over instances' /metrics, scraped directly (not through the proxy). */
async function metricSum(urls: string[], sample: string): Promise<number> {
  let sum = 0;
  for (const url of urls) {
    const text = await (
      await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    // Each instance labels its samples with its instance_id.
    const line = text
      .split('\n')
      .map((l) =>
        l
          .replace(/instance_id="[^"]*",?/, '')
          .replace(',}', '}')
          .replace('{}', ''),
      )
      .find((l) => l.startsWith(`${sample} `));
    sum += line === undefined ? 0 : Number(line.slice(sample.length + 1));
  }
  return sum;
}

t.test(
  'three instances behind HAProxy: affine routing, SIGKILL and SIGTERM of an owner',
  { timeout: 240_000 },
  async (t) => {
    const prefix = uniquePrefix('cluster');
    // A redis-server of the test's own: one phase stops it (the shared Redis is never touched).
    const redis = await startRedisProcess(t);
    const { database, owner, assistant, cluster, output } = await startTestCluster(t, {
      name: 'Cluster',
      redisUrl: redis.url,
      redisPrefix: prefix,
      env: {
        VOICE_OWNERSHIP_TTL_SECONDS: String(OWNERSHIP_TTL_S),
        VOICE_ORPHAN_SWEEP_SECONDS: '1',
        VOICE_DRAIN_TIMEOUT_SECONDS: String(DRAIN_S),
        SHUTDOWN_GRACE_MS: '2000',
        METRICS_TOKEN: METRICS_TOKEN,
      },
    });
    const callers: Caller[] = [];
    t.teardown(() => callers.forEach((c) => c.dispose()));
    const call = async () => {
      const caller = new Caller(cluster.url, owner.secret, assistant.publicId);
      callers.push(caller);
      await caller.start();
      return caller;
    };
    const [n1, n2, n3] = cluster.instances as [
      Cluster['instances'][0],
      Cluster['instances'][0],
      Cluster['instances'][0],
    ];
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    // ---- 30 concurrent calls through the proxy: every request about a session reaches its owner ----------------
    const first = await Promise.all(Array.from({ length: 30 }, () => call()));
    const byKey = (cs: Caller[], key: string) => cs.filter((c) => c.routeKey === key);
    t.same(
      new Set(first.map((c) => c.routeKey)),
      new Set(['n1', 'n2', 'n3']),
      'mints spread over the three instances (least connections)',
    );
    await pause(3500);
    const firstEnds = await Promise.all(first.map((c) => c.end()));
    t.equal(
      first.reduce((n, c) => n + c.count421(), 0),
      0,
      'zero 421s across mints, heartbeats, gates, media and ends',
    );
    t.ok(
      first.every(
        (c) => c.heartbeats.length >= 2 && c.heartbeats.every((h) => h.status === 200 && h.body?.status === 'healthy'),
      ),
      'every heartbeat answered healthy',
    );
    t.ok(
      first.every((c) => c.mediaFramesSent > 10 && c.statuses.includes(101)),
      'every media socket opened through the proxy and carried audio',
    );
    t.ok(
      first.every((c) => c.gateLines.some((l) => l.type === 'gate') && c.gateLines.at(-1)?.type === 'end'),
      'every gate stream ran until its end line',
    );
    t.ok(
      firstEnds.every((e) => e.status === 'ended' && e.endReason === null),
      'every call ended by its caller',
    );

    // ---- Redis unavailable: live calls continue, new mints fail with a clear 503, all recovers when it returns ----
    const throughOutage = await Promise.all(Array.from({ length: 3 }, () => call()));
    await redis.kill();
    const refusedMint = await fetch(`${cluster.url}/api/v1/voice/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] }),
    });
    t.equal(refusedMint.status, 503, 'a mint while Redis is down: 503');
    t.match(
      await refusedMint.json(),
      { code: String, requestId: String },
      "a clear answer from Parley (a code), not the proxy's page",
    );
    await pause(2500);
    t.ok(
      throughOutage.every(
        (c) => c.over === undefined && c.mediaClose === undefined && c.heartbeats.at(-1)?.status === 200,
      ),
      'live calls go on through the outage',
    );
    await redis.start();
    await waitUntil(
      async () =>
        (await cluster.serverStates()).parley?.n1 === 'UP' && (await fetch(`${cluster.url}/readyz`)).status === 200,
      20_000,
      'the instances to be ready again',
    );
    const afterOutage = await call();
    await pause(1500);
    t.ok(
      [...throughOutage, afterOutage].every((c) => c.over === undefined && c.heartbeats.at(-1)?.status === 200),
      'after Redis returns: calls live, mints succeed',
    );
    const outageEnds = await Promise.all([...throughOutage, afterOutage].map((c) => c.end()));
    t.ok(
      outageEnds.every((e) => e.status === 'ended' && e.endReason === null),
      'and they end as their callers chose',
    );
    t.equal(
      [...throughOutage, afterOutage].reduce((n, c) => n + c.count421(), 0),
      0,
      'no 421 through the outage',
    );

    // ---- SIGKILL of an owner mid-call ---------------------------------------------------------------------------
    const second: Caller[] = [];
    while (['n1', 'n2', 'n3'].some((k) => byKey(second, k).length < 2) && second.length < 24) second.push(await call());
    await pause(1500);
    const killedCalls = byKey(second, 'n1');
    const otherCalls = second.filter((c) => c.routeKey !== 'n1');
    n1.kill('SIGKILL');
    await n1.exited;
    // Its calls are reported lost, then ended control_lost, within the ownership expiry (plus a sweep and a beat).
    await waitUntil(
      () => killedCalls.every((c) => c.over !== undefined),
      (OWNERSHIP_TTL_S + 10) * 1000,
      "the dead owner's calls to be reported lost",
    );
    t.ok(
      killedCalls.every((c) => c.over!.body?.status === 'lost' && c.over!.body?.endReason === 'control_lost'),
      "the dead owner's calls: heartbeat answers lost, control_lost",
    );
    t.ok(
      killedCalls.every((c) => c.mediaClose !== undefined),
      'their media sockets closed',
    );
    await waitUntil(
      async () => (await cluster.serverStates()).parley?.n1 === 'DOWN',
      10_000,
      'the proxy to mark the dead instance down',
    );
    await waitUntil(
      async () => (await cluster.serverStates()).parley_alive?.n1 === 'DOWN',
      10_000,
      'no more session traffic to it either (the alive backend marks it down too)',
    );
    t.pass('the dead instance is down in both backends');
    const afterKill = await Promise.all(Array.from({ length: 4 }, () => call()));
    t.ok(
      afterKill.every((c) => c.routeKey === 'n2' || c.routeKey === 'n3'),
      'new mints succeed on the survivors',
    );
    await pause(1000);
    t.equal(
      otherCalls.reduce((n, c) => n + c.count421(), 0),
      0,
      "the survivors' calls saw no 421",
    );
    t.ok(
      otherCalls.every(
        (c) =>
          c.over === undefined && c.mediaClose === undefined && c.heartbeats.every((h) => h.body?.status === 'healthy'),
      ),
      "the survivors' calls went on untouched",
    );
    const killedEnds = await Promise.all(killedCalls.map((c) => c.end()));
    t.ok(
      killedEnds.every((e) => e.status === 'lost' && e.endReason === 'control_lost'),
      'their final answer is lost / control_lost',
    );
    t.equal(
      await metricSum([n2.url, n3.url], 'parley_voice_ends_total{reason="control_lost"}'),
      killedCalls.length,
      'the survivors count each lost call once (metrics)',
    );
    const secondEnds = await Promise.all([...otherCalls, ...afterKill].map((c) => c.end()));
    t.ok(
      secondEnds.every((e) => e.status === 'ended' && e.endReason === null),
      "the survivors' calls ended by their callers",
    );

    // ---- SIGTERM of an owner: its calls go on and finish within the drain ----------------------------------------
    const third: Caller[] = [];
    while (byKey(third, 'n2').length < 4 && third.length < 16) third.push(await call());
    // Three calls that end within the drain, and one that outlives it.
    const [outlives, ...draining] = byKey(third, 'n2') as [Caller, ...Caller[]];
    n2.kill('SIGTERM');
    await waitUntil(
      async () => (await fetch(`${n2.url}/readyz`).catch(() => undefined))?.status === 503,
      5000,
      'the draining instance to answer readiness 503',
    );
    await waitUntil(
      async () => (await cluster.serverStates()).parley?.n2 === 'NOLB',
      10_000,
      'the proxy to stop sending new work to the draining instance',
    );
    const duringDrain = await Promise.all(Array.from({ length: 3 }, () => call()));
    t.ok(
      duringDrain.every((c) => c.routeKey === 'n3'),
      'mints during the drain go to the instance that is not draining',
    );
    await pause(2000);
    t.ok(
      draining.every(
        (c) => c.over === undefined && c.mediaClose === undefined && c.heartbeats.at(-1)?.body?.status === 'healthy',
      ),
      'calls on the draining instance go on',
    );
    const drainedEnds = await Promise.all(draining.map((c) => c.end()));
    t.ok(
      drainedEnds.every((e) => e.status === 'ended' && e.endReason === null),
      'they end as their callers chose, not shutdown',
    );
    await waitUntil(
      () => outlives.over !== undefined,
      (DRAIN_S + 5) * 1000,
      'the call that outlives the drain to be ended',
    );
    t.same(
      outlives.over!.body,
      { status: 'ended', nextHeartbeatMs: 1000, endReason: 'shutdown' },
      'a call still running when the drain times out ends with shutdown',
    );
    const outlivedEnd = await outlives.end();
    t.same([outlivedEnd.status, outlivedEnd.endReason], ['ended', 'shutdown'], 'its final answer says so');
    t.equal(await n2.exited, 0, 'the drained instance exits cleanly once its calls are over');
    const thirdEnds = await Promise.all(
      [...third.filter((c) => c.routeKey !== 'n2'), ...duringDrain].map((c) => c.end()),
    );
    t.ok(
      thirdEnds.every((e) => e.status === 'ended'),
      'the other calls ended normally',
    );
    t.equal(
      [...second, ...afterKill, ...third, ...duringDrain]
        .filter((c) => !killedCalls.includes(c))
        .reduce((n, c) => n + c.count421(), 0),
      0,
      "no 421 outside the dead owner's own calls",
    );

    // ---- the database agrees with what the callers saw ----------------------------------------------------------
    const seen = new Map<string, EndSeen>();
    for (const c of callers) seen.set(c.sessionId, c.ended!);
    // Mints refused while Redis was down (the proxy tried each on up to three instances) gave their grants back.
    const refusedGrants = await checkLedger(t, database.sql, owner.accountId, seen);
    t.ok(
      refusedGrants.length >= 1 &&
        refusedGrants.every((u) => u.open === 0 && u.events === u.reservations && u.units === 0),
      'refused mints left no open or billed grant',
    );
    if (t.passing() === false)
      t.comment(
        output
          .filter((l) => /error|warn|ALERT/i.test(l))
          .slice(-40)
          .join('\n'),
      );
  },
);
