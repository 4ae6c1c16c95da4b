import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import t from 'tap';
import type { LoadTestReport } from '../../sdk/src/cli/loadtest/run.js';
import { summaryText } from '../../sdk/src/cli/loadtest/summary.js';
import { runScript } from '../sdk/helpers.js';
import { admin, waitUntil } from '../../scripts/cluster/cluster.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { uniquePrefix } from '../helpers/store.js';
import { Caller } from './caller.js';
import { startTestCluster } from './setup.js';

/**
 * Three real instances behind the real HAProxy, with production ownership timing (records renewed every 5 s, expiring
 * after 15 s): new calls even out the live calls, a burst of mints is admitted evenly with no error answer, and a
 * killed owner's calls are answered `lost` while its ownership record still names it.
 */
const KEYS = ['n1', 'n2', 'n3'] as const;

t.test(
  'live calls even out across instances; a dead owner is answered for at once',
  { timeout: 240_000 },
  async (t) => {
    const prefix = uniquePrefix('fleet');
    const { owner, assistant, cluster, output } = await startTestCluster(t, {
      name: 'Fleet',
      redisUrl: TEST_REDIS_URL,
      redisPrefix: prefix,
      env: { VOICE_DRAIN_TIMEOUT_SECONDS: '5', SHUTDOWN_GRACE_MS: '1000' },
    });
    const redis = new Redis(TEST_REDIS_URL, { keyPrefix: prefix, lazyConnect: true });
    t.teardown(() => redis.quit());
    const callers: Caller[] = [];
    t.teardown(() => callers.forEach((c) => c.dispose()));
    const call = async () => {
      const caller = new Caller(cluster.url, owner.secret, assistant.publicId);
      callers.push(caller);
      await caller.start();
      return caller;
    };
    const live = () => callers.filter((c) => c.ended === undefined && c.over === undefined);
    const perInstance = (cs: Caller[]) => KEYS.map((k) => cs.filter((c) => c.routeKey === k).length);

    // ---- parley-loadtest through the proxy says where its calls ran -------------------------------------------------
    const loadtest = await runScript(
      fileURLToPath(new URL('../../sdk/src/cli/loadtest/main.ts', import.meta.url)),
      [
        ...['--url', cluster.url, '--assistant', assistant.publicId, '--calls', '6', '--ramp-up', '300ms'],
        ...['--duration', '3s', '--json', '--no-report', '--yes', '--quiet'],
      ],
      { env: { PARLEY_API_KEY: owner.secret } },
    );
    t.equal(loadtest.code, 0, `parley-loadtest exit 0 (${loadtest.stderr.slice(-400)})`);
    const report = JSON.parse(loadtest.stdout) as LoadTestReport;
    t.same(Object.keys(report.voice.perInstance).sort(), ['n1', 'n2', 'n3'], 'calls per instance, by route key');
    t.equal(
      Object.values(report.voice.perInstance).reduce((a, b) => a + b, 0),
      report.voice.connected,
      'every connected call counted once',
    );
    t.match(summaryText(report), /calls per instance\s+n\d: \d/, 'and the printed summary shows them');
    await waitUntil(
      async () => (await redis.keys('voice:owner:*')).length === 0,
      10_000,
      "the load test's calls to be over",
    );

    // ---- unequal start: four live calls on n1 only (the others out of the mint rotation meanwhile) ----------------
    await admin(cluster.adminSocket, ['set server parley/n2 state drain', 'set server parley/n3 state drain']);
    const early = [];
    for (let i = 0; i < 4; i++) early.push(await call());
    t.same(perInstance(early), [4, 0, 0], 'four live calls on n1');
    await admin(cluster.adminSocket, ['set server parley/n2 state ready', 'set server parley/n3 state ready']);

    // ---- twelve calls one after another from one client (keep-alive connections): they go to the emptier ones -----
    const later = [];
    for (let i = 0; i < 12; i++) later.push(await call());
    const counts = perInstance(live());
    t.comment(`live calls per instance after 12 sequential mints: ${counts.join('/')} (new: ${perInstance(later)})`);
    t.ok(Math.max(...counts) - Math.min(...counts) <= 1, `live calls even out (${counts.join('/')})`);
    t.ok(perInstance(later)[0]! <= 2, 'the loaded instance took few of the new calls');
    t.equal(
      callers.reduce((n, c) => n + c.count421(), 0),
      0,
      'zero 421s',
    );

    // ---- SIGKILL of n2: its calls are lost while its ownership record (15 s) still names it ----------------------
    const doomed = live().filter((c) => c.routeKey === 'n2');
    const others = live().filter((c) => c.routeKey !== 'n2');
    t.ok(doomed.length >= 3, 'n2 runs calls');
    const n2 = cluster.instances[1]!;
    n2.kill('SIGKILL');
    await n2.exited;
    const recordsAtLost: Array<string | null> = [];
    await waitUntil(
      async () => {
        for (const c of doomed) {
          if (c.over === undefined) return false;
          if (recordsAtLost.length < doomed.length) recordsAtLost.push(await redis.get(`voice:owner:${c.sessionId}`));
        }
        return true;
      },
      20_000,
      "n2's calls to be answered lost",
    );
    t.ok(
      doomed.every((c) => c.over!.status === 200 && c.over!.body?.status === 'lost'),
      'each heartbeat ends with lost',
    );
    t.ok(
      recordsAtLost.every((r) => r !== null && JSON.parse(r).instanceId === n2.instanceId),
      'answered while the ownership records still named the dead instance (before they expired)',
    );
    const ends = await Promise.all(doomed.map((c) => c.end()));
    t.ok(
      ends.every((e) => e.status === 'lost' && e.endReason === 'control_lost'),
      'end answers lost / control_lost',
    );
    t.ok(
      doomed.every((c) => c.gateLines.at(-1)?.type === 'end' || c.gateError !== undefined),
      'their gate streams ended',
    );
    const gate = await fetch(`${cluster.url}/api/v1/voice/sessions/${doomed[0]!.sessionId}/gate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: doomed[0]!.controlToken }),
    });
    t.equal(gate.status, 200, 'a new gate stream for a lost call is answered');
    t.match(await gate.text(), /"type":"end"/, 'with its end line');
    await waitUntil(
      async () => (await cluster.serverStates()).parley?.n2 === 'DOWN',
      5000,
      'the proxy to mark n2 down',
    );
    const afterKill = [];
    for (let i = 0; i < 4; i++) afterKill.push(await call());
    t.ok(
      afterKill.every((c) => c.routeKey !== 'n2'),
      'new calls go to the survivors',
    );
    t.ok(
      others.every((c) => c.over === undefined && c.heartbeats.every((h) => h.body?.status === 'healthy')),
      "the survivors' calls went on",
    );
    const rest = await Promise.all(live().map((c) => c.end()));
    t.ok(
      rest.every((e) => e.status === 'ended' && e.endReason === null),
      'and ended as their callers chose',
    );
    if (!t.passing())
      t.comment(
        output
          .filter((l) => /error|warn/i.test(l))
          .slice(-30)
          .join('\n'),
      );
  },
);
