import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, startCluster, waitUntil, type Cluster } from '../../scripts/cluster/cluster.js';
import { Caller } from '../../test/cluster/caller.js';
import { buildParley, createAssistant, prepareFixture, removeFixture } from '../harness/parley.js';
import { percentile } from '../harness/stats.js';
import { postgresCounters, postgresDelta, subscribers, watchRedis, type PostgresCounters } from './load.js';

/**
 * `npm run bench -- --only=fleet`: Parley as a fleet behind HAProxy (`npm run cluster`'s code), on this machine.
 *
 * 1. Burst: `burst` mints sent at once through the proxy to 3 instances: answers by status, refusals with
 *    Retry-After and a code, mint latency, where the calls landed (their session ids' route keys), and how long
 *    after the calls ended until every instance reports zero live calls.
 * 2. Load per live call, with 3 and with 10 instances: `perInstance` calls each (heartbeats, gate stream, media)
 *    against an idle window of the same length; Redis commands by family (MONITOR on a redis-server of the run's
 *    own), PostgreSQL commits and row writes (pg_stat_database of the run's database), pub/sub messages.
 *
 * Production timing (ownership renewed every 5 s, heartbeats at the interval the mint gives). Figures are printed and
 * returned; nothing is asserted.
 */
export interface FleetOptions {
  sizes: number[];
  burst: number;
  perInstance: number;
  windowSeconds: number;
  databaseUrl: string;
  log: (line: string) => void;
}

export interface FleetSizeResult {
  instances: number;
  calls: number;
  windowSeconds: number;
  idle: {
    redisCommandsPerSecond: number;
    redisScriptInnerPerSecond: number;
    postgresWritesPerMinute: number;
    postgresCommitsPerMinute: number;
  };
  perCall: {
    /** Round trips (a script once). */
    redisCommandsPerSecond: number;
    /** Commands run inside scripts (the ownership compare-and-set runs a GET and a SET). */
    redisScriptInnerPerSecond: number;
    ownershipRenewalsPerMinute: number;
    postgresWritesPerMinute: number;
    postgresCommitsPerMinute: number;
    pubsubPublishesPerMinute: number;
    pubsubDeliveredPerMinute: number;
  };
  redisFamilies: Record<string, number>;
  /** The windows as counted (Redis commands by family with a few examples; PostgreSQL counter deltas). */
  raw: Record<string, unknown>;
}

export interface BurstResult {
  mints: number;
  instances: number;
  statuses: Record<string, number>;
  /** Answers other than 200 by status and code (and reason, for voice refusals): what a refused caller was told. */
  refusals: Record<string, number>;
  refusalsWithRetryAfterAndCode: number;
  /** The 1-minute load average when the burst began (2 shared cores: figures above ~2 measure other work too). */
  load1AtStart: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  perInstance: Record<string, number>;
  /** PostgreSQL row writes (inserted + updated + deleted) and commits per call, mint to settled end. */
  postgresWritesPerCall: number;
  postgresCommitsPerCall: number;
  /** Every end answered -> every instance's parley_voice_sessions_active back at 0 (polled every 100 ms). */
  slotsFreeMs: number;
}

export interface FleetResult {
  loadAverage: { before: number; after: number };
  burst?: BurstResult;
  sizes: FleetSizeResult[];
}

async function ownRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const proc = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  await waitUntil(
    async () => {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      const ok = await probe.connect().then(
        () => probe.ping().then(() => true),
        () => false,
      );
      probe.disconnect();
      return ok;
    },
    10_000,
    'redis-server',
  );
  return { url, stop: async () => void (proc.kill('SIGTERM'), await new Promise((r) => proc.once('exit', r))) };
}

const METRICS_TOKEN = 'fleet-bench-metrics-token-0123456789';

async function liveCalls(cluster: Cluster): Promise<number> {
  let sum = 0;
  for (const i of cluster.instances) {
    const text = await (
      await fetch(`${i.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    const line = text.split('\n').find((l) => l.startsWith('parley_voice_sessions_active'));
    sum += Number(line?.slice(line.lastIndexOf(' ') + 1) ?? 0);
  }
  return sum;
}

async function burst(
  cluster: Cluster,
  apiKey: string,
  assistantId: string,
  n: number,
  databaseUrl: string,
): Promise<BurstResult> {
  const before = await postgresCounters(databaseUrl);
  const mint = async () => {
    const started = performance.now();
    const res = await fetch(`${cluster.url}/api/v1/voice/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ assistantId, capabilities: ['heartbeat', 'playback_gate'] }),
      signal: AbortSignal.timeout(30_000),
    }).catch(() => undefined);
    const ms = performance.now() - started;
    const body = (await res?.json().catch(() => undefined)) as
      { sessionId?: string; code?: string; reason?: string } | undefined;
    return { status: res?.status ?? 0, ms, body, retryAfter: res?.headers.get('retry-after') ?? null };
  };
  const load1AtStart = loadavg()[0]!;
  const answers = await Promise.all(Array.from({ length: n }, mint));
  const statuses: Record<string, number> = {};
  const refusals: Record<string, number> = {};
  const perInstance: Record<string, number> = {};
  for (const a of answers) {
    statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    if (a.status !== 200) {
      const what = [a.status, a.body?.code ?? 'no code', a.body?.reason].filter((x) => x !== undefined).join(' ');
      refusals[what] = (refusals[what] ?? 0) + 1;
    }
    const key = /^vs_([a-z0-9]+)_/.exec(a.body?.sessionId ?? '')?.[1];
    if (a.status === 200 && key !== undefined) perInstance[key] = (perInstance[key] ?? 0) + 1;
  }
  const times = answers.map((a) => a.ms).sort((x, y) => x - y);
  await Promise.all(
    answers
      .filter((a) => a.status === 200)
      .map((a) =>
        fetch(`${cluster.url}/api/v1/voice/sessions/${a.body!.sessionId}/end`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: '{}',
        }).then((r) => r.arrayBuffer()),
      ),
  );
  const ended = performance.now();
  await waitUntil(async () => (await liveCalls(cluster)) === 0, 30_000, 'every slot free');
  const slotsFreeMs = Math.round(performance.now() - ended);
  // Settlement finishes before the slot frees; give the backends' counters their flush (at most 1 s) first.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const pg = postgresDelta(before, await postgresCounters(databaseUrl));
  const admitted = answers.filter((a) => a.status === 200).length;
  return {
    mints: n,
    instances: cluster.instances.length,
    statuses,
    refusals,
    load1AtStart: Math.round(load1AtStart * 100) / 100,
    refusalsWithRetryAfterAndCode: answers.filter(
      (a) => (a.status === 429 || a.status === 503) && a.retryAfter !== null && typeof a.body?.code === 'string',
    ).length,
    p50Ms: Math.round(percentile(times, 50)),
    p95Ms: Math.round(percentile(times, 95)),
    maxMs: Math.round(times.at(-1) ?? 0),
    perInstance,
    postgresWritesPerCall: Math.round(((pg.inserted + pg.updated + pg.deleted) / Math.max(1, admitted)) * 10) / 10,
    postgresCommitsPerCall: Math.round((pg.commits / Math.max(1, admitted)) * 10) / 10,
    slotsFreeMs,
  };
}

async function measureSize(
  instances: number,
  options: FleetOptions,
  wantBurst: boolean,
): Promise<{ size: FleetSizeResult; burst?: BurstResult }> {
  const { log } = options;
  const build = await buildParley('tsx', log);
  const redis = await ownRedis();
  const fixture = await prepareFixture(build, log, options.databaseUrl);
  const workDir = mkdtempSync(join(tmpdir(), 'parley-fleet-bench-'));
  let cluster: Cluster | undefined;
  const callers: Caller[] = [];
  try {
    const { HOST: _h, PORT: _p, DATA_DIR: _d, ...env } = fixture.env;
    log(`fleet: starting ${instances} instances behind HAProxy`);
    cluster = await startCluster({
      instances,
      workDir,
      env: {
        ...env,
        LOG_LEVEL: 'warn',
        REDIS_URL: redis.url,
        SECRET_KEY: 'fleet-bench-secret-key-that-is-at-least-32-bytes',
        METRICS_TOKEN,
        DATABASE_POOL_SIZE: '4',
        // ADMISSION_* and DATABASE_POOL_SIZE from the bench's environment: compare settings run by run.
        ...Object.fromEntries(
          Object.entries(process.env).filter(
            (entry): entry is [string, string] =>
              (entry[0].startsWith('ADMISSION_') || entry[0] === 'DATABASE_POOL_SIZE') && entry[1] !== undefined,
          ),
        ),
      },
    });
    const assistant = await createAssistant(cluster.url, fixture.apiKey);
    if (typeof assistant === 'string') throw new Error(assistant);
    const databaseUrl = fixture.env.DATABASE_URL!;
    const ms = options.windowSeconds * 1000;
    const measure = async () => {
      const before: PostgresCounters = await postgresCounters(databaseUrl);
      const window = await watchRedis(redis.url, fixture.redisPrefix, ms);
      const delta = postgresDelta(before, await postgresCounters(databaseUrl));
      return { window, delta };
    };
    log(`fleet: idle window (${options.windowSeconds} s)`);
    const idle = await measure();
    const calls = instances * options.perInstance;
    for (let i = 0; i < calls; i++) {
      const caller = new Caller(cluster.url, fixture.apiKey, assistant.publicId);
      callers.push(caller);
      await caller.start();
    }
    // One renewal period so the calls' loops are in their steady state.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    log(`fleet: ${calls} live calls, window (${options.windowSeconds} s)`);
    const loaded = await measure();
    const subs = await subscribers(redis.url, fixture.redisPrefix);
    await Promise.all(callers.map((c) => c.end()));
    // The burst last, so its settlements do not land in a measured window.
    const burstResult = wantBurst
      ? await burst(cluster, fixture.apiKey, assistant.publicId, options.burst, databaseUrl)
      : undefined;
    if (burstResult) log(`fleet: burst ${JSON.stringify(burstResult)}`);
    const perMinute = 60 / options.windowSeconds;
    const writes = (d: PostgresCounters) => d.inserted + d.updated + d.deleted;
    const per = (a: number, b: number) => Math.round(((a - b) / calls) * 1000) / 1000;
    const families: Record<string, number> = {};
    for (const [f, n] of Object.entries(loaded.window.byFamily))
      families[f] = per(n / options.windowSeconds, (idle.window.byFamily[f] ?? 0) / options.windowSeconds);
    const publishes = per(loaded.window.publishes * perMinute, idle.window.publishes * perMinute);
    return {
      ...(burstResult ? { burst: burstResult } : {}),
      size: {
        instances,
        calls,
        windowSeconds: options.windowSeconds,
        idle: {
          redisCommandsPerSecond: Math.round((idle.window.commands / options.windowSeconds) * 10) / 10,
          redisScriptInnerPerSecond: Math.round((idle.window.scriptInner / options.windowSeconds) * 10) / 10,
          postgresWritesPerMinute: Math.round(writes(idle.delta) * perMinute),
          postgresCommitsPerMinute: Math.round(idle.delta.commits * perMinute),
        },
        perCall: {
          redisCommandsPerSecond: per(
            loaded.window.commands / options.windowSeconds,
            idle.window.commands / options.windowSeconds,
          ),
          redisScriptInnerPerSecond: per(
            loaded.window.scriptInner / options.windowSeconds,
            idle.window.scriptInner / options.windowSeconds,
          ),
          ownershipRenewalsPerMinute: per(
            (loaded.window.byFamily['voice:owner'] ?? 0) * perMinute,
            (idle.window.byFamily['voice:owner'] ?? 0) * perMinute,
          ),
          postgresWritesPerMinute: per(writes(loaded.delta) * perMinute, writes(idle.delta) * perMinute),
          postgresCommitsPerMinute: per(loaded.delta.commits * perMinute, idle.delta.commits * perMinute),
          pubsubPublishesPerMinute: publishes,
          pubsubDeliveredPerMinute: Math.round(publishes * subs * 1000) / 1000,
        },
        redisFamilies: families,
        raw: { idle: idle.window, loaded: loaded.window, idlePostgres: idle.delta, loadedPostgres: loaded.delta },
      },
    };
  } finally {
    callers.forEach((c) => c.dispose());
    await cluster?.stop({ signal: 'SIGKILL' });
    rmSync(workDir, { recursive: true, force: true });
    await removeFixture(fixture);
    await redis.stop();
  }
}

export async function runFleetBench(options: FleetOptions): Promise<FleetResult> {
  const result: FleetResult = { loadAverage: { before: loadavg()[0]!, after: 0 }, sizes: [] };
  for (const size of options.sizes) {
    const { size: measured, burst: b } = await measureSize(size, options, size === 3 && options.burst > 0);
    if (b) result.burst = b;
    result.sizes.push(measured);
    options.log(`fleet: ${size} instances ${JSON.stringify(measured)}`);
  }
  result.loadAverage.after = loadavg()[0]!;
  return result;
}
