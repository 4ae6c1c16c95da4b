/**
 * HTTP scenario: wrk against bare uWS hello, node:http hello, the floor (bare uWS + postgres.js, the same SELECT
 * by id as Parley's authenticated GET, no auth), the peer (Fastify + postgres.js + a Redis limiter, the same
 * authenticated read the usual way) and Parley's routes (healthz, Bearer GET of an assistant, keyless chat with the
 * local provider, the voice mint against the simulator), in interleaved rounds. Each route is reported as a
 * per-round ratio of bare uWS hello (and the GET also of the floor and the peer), with the server's CPU per request.
 */
import { join } from 'node:path';
import { BENCH_DIR, sampleProcess, startChild, startSimulator, urlLine, type Child } from '../harness/children.js';
import {
  BENCH_ORIGIN,
  createAssistant,
  startParley,
  type BenchAssistant,
  type ParleyBuild,
  type ParleyFixture,
} from '../harness/parley.js';
import { round } from '../harness/stats.js';
import { findWrk, runWrk, WRK_MISSING, type WrkOptions, type WrkRequest } from './wrk.js';

export type HttpTargetName =
  | 'uws-hello'
  | 'node-hello'
  | 'uws-pg-floor'
  | 'fastify-peer'
  | 'parley-healthz'
  | 'parley-healthz-logged'
  | 'parley-assistant-get'
  | 'parley-voice-mint'
  | 'parley-chat';

export interface HttpRun {
  target: HttpTargetName;
  label: string;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  connections?: number;
  /** Medians over the rounds. */
  requestsPerSecond?: number;
  p50Ms?: number;
  p99Ms?: number;
  errors?: number;
  /** Server process CPU (user + system) per request, microseconds: steadier than req/s on a shared machine. */
  cpuUsPerRequest?: number;
  /** Requests per second of every round, in order. */
  rounds?: number[];
  /** Median over the rounds of (this target's req/s / bare uWS hello's req/s in the same round). */
  ratioToUws?: number;
  /** [min, max] of that per-round ratio: the noise. */
  ratioToUwsRange?: [number, number];
  /** Authenticated GET only: per-round ratio to the floor and to the Fastify peer (medians, [min, max]). */
  ratioToFloor?: number;
  ratioToFloorRange?: [number, number];
  ratioToPeer?: number;
  ratioToPeerRange?: [number, number];
  /**
   * The same comparisons by server CPU per request (baseline µs / this target's µs, medians): on a machine shared
   * with other work, req/s moves with whatever else runs; CPU per request moves far less.
   */
  cpuRatioToUws?: number;
  cpuRatioToFloor?: number;
  cpuRatioToPeer?: number;
}

export interface HttpOptions {
  seconds: number;
  /** Interleaved rounds: every target once per round, in the same order (default 3). */
  rounds?: number;
  serverCpus: number[] | undefined;
  generatorCpus: number[] | undefined;
  simulatorCpus: number[] | undefined;
  parley: { build: ParleyBuild; fixture: ParleyFixture } | undefined;
  parleyUnavailable?: string;
  log: (line: string) => void;
}

export interface HttpResult {
  status: 'ok' | 'skipped';
  reason?: string;
  wrk?: { threads: number };
  rounds?: number;
  runs: HttpRun[];
}

const LABELS: Record<HttpTargetName, string> = {
  'uws-hello': 'bare uWS hello',
  'node-hello': 'node:http hello',
  'uws-pg-floor': 'floor: bare uWS + postgres.js, same SELECT by id',
  'fastify-peer': 'peer: Fastify + postgres.js + Redis limiter, Bearer',
  'parley-healthz': 'Parley GET /healthz',
  'parley-healthz-logged': 'Parley GET /healthz, access log on (default)',
  'parley-assistant-get': 'Parley GET /api/v1/assistants/{id} (Bearer, limiter)',
  'parley-voice-mint': 'Parley POST /api/v1/voice/sessions (mint, simulator)',
  'parley-chat': 'Parley POST /api/v1/chat (keyless, local provider)',
};

/** A 404 from the router itself (not a capability's "not found"): the route is not registered in this tree. */
async function probe(request: WrkRequest): Promise<string | undefined> {
  const res = await fetch(request.url, {
    method: request.method ?? 'GET',
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const text = await res.text();
  if (res.status === 404 && text.includes('HTTP_NOT_FOUND'))
    return `${request.method ?? 'GET'} ${new URL(request.url).pathname} is not registered yet (router 404)`;
  if (res.status >= 400) return `probe answered ${res.status}: ${text.slice(0, 200)}`;
  return undefined;
}

interface Target {
  name: HttpTargetName;
  pid: number;
  request: WrkRequest;
  connections: number;
}

interface Sample {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  cpuUsPerRequest: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function ratioStats(num: number[], den: number[]): { median: number; range: [number, number] } | undefined {
  const ratios = num.map((n, i) => n / den[i]!).filter((r) => Number.isFinite(r));
  if (ratios.length === 0) return undefined;
  return { median: round(median(ratios), 3), range: [round(Math.min(...ratios), 3), round(Math.max(...ratios), 3)] };
}

/**
 * Every server is started first (idle ones cost nothing), then each round runs wrk once against every target in the
 * same order, so a burst of load from elsewhere on the machine hits one round of every target rather than all
 * rounds of one. Figures are medians over the rounds; ratios are computed per round (same round) and reported as
 * median [min–max].
 */
export async function runHttpScenario(options: HttpOptions): Promise<HttpResult> {
  const wrk = findWrk();
  if (wrk === undefined) {
    options.log(WRK_MISSING);
    return { status: 'skipped', reason: WRK_MISSING, runs: [] };
  }
  const threads = Math.max(1, options.generatorCpus?.length ?? 1);
  const rounds = options.rounds ?? 3;
  const base: WrkOptions = { threads, connections: 64, seconds: options.seconds, cpus: options.generatorCpus };
  const skipped = new Map<HttpTargetName, { status: 'skipped' | 'failed'; reason: string }>();
  const targets: Target[] = [];
  const children: Child[] = [];
  const start = async (name: string, script: string, env?: Record<string, string>): Promise<Child> => {
    const child = await startChild({
      name,
      script: join(BENCH_DIR, 'baselines', script),
      cpus: options.serverCpus,
      ready: urlLine,
      ...(env ? { env } : {}),
    });
    children.push(child);
    return child;
  };
  const add = async (name: HttpTargetName, pid: number, request: WrkRequest, connections = 64): Promise<void> => {
    try {
      const skip = await probe(request);
      if (skip !== undefined) {
        skipped.set(name, { status: 'skipped', reason: skip });
        options.log(`http: ${name} skipped: ${skip}`);
        return;
      }
      targets.push({ name, pid, request, connections });
    } catch (err) {
      skipped.set(name, { status: 'failed', reason: err instanceof Error ? err.message : String(err) });
    }
  };

  const samples = new Map<HttpTargetName, Sample[]>();
  try {
    const uws = await start('uws-hello', 'uws-hello.ts');
    await add('uws-hello', uws.pid, { url: uws.info });
    const node = await start('node-hello', 'node-hello.ts');
    await add('node-hello', node.pid, { url: node.info });

    const parleyTargets = [
      'parley-healthz',
      'parley-healthz-logged',
      'parley-assistant-get',
      'parley-chat',
      'parley-voice-mint',
    ] as const;
    if (options.parley === undefined) {
      const reason = options.parleyUnavailable ?? 'Parley could not be prepared';
      for (const target of [...parleyTargets, 'uws-pg-floor', 'fastify-peer'] as const)
        skipped.set(target, { status: 'skipped', reason });
    } else {
      try {
        const simulator = await startSimulator(options.simulatorCpus);
        children.push(simulator);
        // The access log (one JSON line per request on stdout, ACCESS_LOG_SAMPLE_RATE=1 by default) is off for the
        // routes measured here, so they show the shell and the route's work; its cost is one row of its own below.
        const parley = await startParley(
          options.parley.build,
          options.parley.fixture,
          simulator.info,
          options.serverCpus,
          { env: { ACCESS_LOG_SAMPLE_RATE: '0' } },
        );
        children.push(parley);
        const logged = await startParley(
          options.parley.build,
          options.parley.fixture,
          simulator.info,
          options.serverCpus,
        );
        children.push(logged);
        const url = parley.info;
        const fixture = options.parley.fixture;
        const bearer = { authorization: `Bearer ${fixture.apiKey}` };
        await add('parley-healthz', parley.pid, { url: `${url}/healthz` });
        await add('parley-healthz-logged', logged.pid, { url: `${logged.info}/healthz` });
        const assistant: BenchAssistant | string = await createAssistant(url, fixture.apiKey);
        if (typeof assistant === 'string') {
          for (const target of [
            'parley-assistant-get',
            'parley-voice-mint',
            'parley-chat',
            'uws-pg-floor',
            'fastify-peer',
          ] as const) {
            skipped.set(target, { status: 'skipped', reason: `no bench assistant: ${assistant}` });
          }
        } else {
          await add('parley-assistant-get', parley.pid, {
            url: `${url}/api/v1/assistants/${assistant.id}`,
            headers: bearer,
          });
          const databaseUrl = fixture.env['DATABASE_URL'];
          if (databaseUrl === undefined) {
            const reason = 'needs PostgreSQL (the embedded database is in-process: no floor or peer can share it)';
            skipped.set('uws-pg-floor', { status: 'skipped', reason });
            skipped.set('fastify-peer', { status: 'skipped', reason });
          } else {
            const floor = await start('uws-pg-floor', 'uws-pg-floor.ts', { BENCH_FLOOR_DATABASE_URL: databaseUrl });
            await add('uws-pg-floor', floor.pid, { url: `${floor.info}assistants/${assistant.id}` });
            const peer = await start('fastify-peer', 'fastify-peer.ts', {
              BENCH_PEER_DATABASE_URL: databaseUrl,
              BENCH_PEER_REDIS_URL: fixture.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
              BENCH_PEER_REDIS_PREFIX: `${fixture.redisPrefix}peer:`,
            });
            await add('fastify-peer', peer.pid, { url: `${peer.info}assistants/${assistant.id}`, headers: bearer });
          }
          // Keyless chat: the Origin must be on the assistant's allowedDomains; a fixed visitor (limits raised for the run).
          await add('parley-chat', parley.pid, {
            url: `${url}/api/v1/chat`,
            method: 'POST',
            headers: { origin: BENCH_ORIGIN, 'content-type': 'application/json' },
            body: JSON.stringify({
              assistantId: assistant.publicId,
              message: 'What are your opening hours?',
              visitorId: 'native-bench-visitor',
            }),
          });
          // Every mint starts a real provider session on the simulator: few connections.
          await add(
            'parley-voice-mint',
            parley.pid,
            {
              url: `${url}/api/v1/voice/sessions`,
              method: 'POST',
              headers: { ...bearer, 'content-type': 'application/json' },
              body: JSON.stringify({ assistantId: assistant.id, capabilities: ['playback_gate'] }),
            },
            8,
          );
        }
      } catch (err) {
        options.log(`http: Parley failed: ${err instanceof Error ? err.message : String(err)}`);
        for (const target of [...parleyTargets, 'uws-pg-floor', 'fastify-peer'] as const) {
          if (!targets.some((t) => t.name === target) && !skipped.has(target))
            skipped.set(target, { status: 'failed', reason: err instanceof Error ? err.message : String(err) });
        }
      }
    }

    // Warm-up, not recorded: every server's JIT has compiled its hot path before round 1 (otherwise round 1 measures
    // compilation, for Parley far more than for a one-line hello).
    for (const target of targets) {
      options.log(`http: warm-up ${target.name}...`);
      await runWrk(wrk, target.request, {
        ...base,
        connections: target.connections,
        seconds: Math.min(2, options.seconds),
      }).catch(() => undefined);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const target of targets) {
        options.log(`http: round ${round}/${rounds} ${target.name}...`);
        try {
          const before = sampleProcess(target.pid).cpuMs;
          const report = await runWrk(wrk, target.request, { ...base, connections: target.connections });
          const cpuMs = sampleProcess(target.pid).cpuMs - before;
          const list = samples.get(target.name) ?? [];
          list.push({
            rps: report.requestsPerSecond,
            p50Ms: report.p50Ms,
            p99Ms: report.p99Ms,
            errors: report.errors,
            cpuUsPerRequest: report.requests > 0 ? (cpuMs * 1000) / report.requests : Number.NaN,
          });
          samples.set(target.name, list);
        } catch (err) {
          skipped.set(target.name, { status: 'failed', reason: err instanceof Error ? err.message : String(err) });
        }
      }
    }
  } finally {
    for (const child of children.reverse()) await child.stop();
  }

  const order: HttpTargetName[] = [
    'uws-hello',
    'node-hello',
    'uws-pg-floor',
    'fastify-peer',
    'parley-healthz',
    'parley-healthz-logged',
    'parley-assistant-get',
    'parley-chat',
    'parley-voice-mint',
  ];
  const rpsOf = (name: HttpTargetName): number[] => (samples.get(name) ?? []).map((s) => s.rps);
  const runs: HttpRun[] = [];
  for (const name of order) {
    const failed = skipped.get(name);
    const list = samples.get(name);
    if (failed !== undefined || list === undefined || list.length < rounds) {
      runs.push({
        target: name,
        label: LABELS[name],
        status: failed?.status ?? 'failed',
        reason: failed?.reason ?? 'not measured',
      });
      continue;
    }
    const run: HttpRun = {
      target: name,
      label: LABELS[name],
      status: 'ok',
      connections: targets.find((t) => t.name === name)!.connections,
      requestsPerSecond: round(median(list.map((s) => s.rps)), 0),
      p50Ms: round(median(list.map((s) => s.p50Ms)), 3),
      p99Ms: round(median(list.map((s) => s.p99Ms)), 3),
      errors: list.reduce((n, s) => n + s.errors, 0),
      cpuUsPerRequest: round(median(list.map((s) => s.cpuUsPerRequest)), 1),
      rounds: list.map((s) => round(s.rps, 0)),
    };
    const cpuOf = (other: HttpTargetName): number | undefined => {
      const list = samples.get(other);
      return list === undefined || skipped.has(other) ? undefined : median(list.map((s) => s.cpuUsPerRequest));
    };
    const cpuRatio = (other: HttpTargetName): number | undefined => {
      const base = cpuOf(other);
      return base === undefined || !(run.cpuUsPerRequest! > 0) ? undefined : round(base / run.cpuUsPerRequest!, 3);
    };
    const byCpuUws = cpuRatio('uws-hello');
    if (byCpuUws !== undefined) run.cpuRatioToUws = byCpuUws;
    const toUws = ratioStats(rpsOf(name), rpsOf('uws-hello'));
    if (toUws !== undefined && skipped.get('uws-hello') === undefined) {
      run.ratioToUws = toUws.median;
      run.ratioToUwsRange = toUws.range;
    }
    if (name === 'parley-assistant-get') {
      const toFloor = ratioStats(rpsOf(name), rpsOf('uws-pg-floor'));
      const toPeer = ratioStats(rpsOf(name), rpsOf('fastify-peer'));
      if (toFloor !== undefined && skipped.get('uws-pg-floor') === undefined) {
        run.ratioToFloor = toFloor.median;
        run.ratioToFloorRange = toFloor.range;
      }
      if (toPeer !== undefined && skipped.get('fastify-peer') === undefined) {
        run.ratioToPeer = toPeer.median;
        run.ratioToPeerRange = toPeer.range;
      }
      const byCpuFloor = cpuRatio('uws-pg-floor');
      const byCpuPeer = cpuRatio('fastify-peer');
      if (byCpuFloor !== undefined) run.cpuRatioToFloor = byCpuFloor;
      if (byCpuPeer !== undefined) run.cpuRatioToPeer = byCpuPeer;
    }
    runs.push(run);
  }
  return { status: 'ok', wrk: { threads }, rounds, runs };
}
