/**
 * native-bench: Parley against its baselines on one machine, in one run, reported as ratios.
 *
 *   npm run bench                       full run (under 5 minutes on 2 cores)
 *   npm run bench -- --quick            about a minute
 *   npm run bench -- --only=voice       or --only=http
 *   npm run bench -- --only=fleet       a fleet behind HAProxy: a burst of mints, load per live call (fleet/run.ts)
 *   npm run bench -- --only=fleet --fleet-sizes=3,10 --burst=300 --fleet-calls=3 --window=20
 *   npm run bench -- --only=webrtc      Parley's CPU per call-second, WebRTC vs WebSocket (webrtc/run.ts)
 *   npm run bench -- --only=webrtc --webrtc-calls=10 --window=10
 *   npm run bench -- --sessions=50,200  voice concurrency levels
 *   npm run bench -- --relays=ws-relay,uws-relay,parley   (direct always runs: it is the latency floor)
 *   npm run bench -- --workers=2 --parley=tsx --no-pin
 *   npm run bench -- --rounds=5 --shapes=echo,realistic --eld   interleaved rounds per (implementation, N), traffic
 *                                       shapes, event-loop delay probe (profiling only)
 *   npm run bench -- --append-ms=5      Parley's VOICE_PROVIDER_APPEND_MS (the coalescing cap) in both shapes
 *   npm run bench -- --window=30        seconds measured per (implementation, N, round) (default 4)
 *   npm run bench -- --only=voice --sessions=200 --relays=parley --rounds=1 --heap-snapshot=/tmp/snap
 *                                       heap snapshots (empty and loaded) of every server, compared by constructor
 *
 * Writes native-bench/results/latest.json, prints a table, and (on runs without --only) refreshes the generated
 * part of native-bench/RESULTS.md and native-bench/results/chart.svg. Loopback only. Figures are never asserted:
 * no timing enters the test suite.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { assertLoopback, BENCH_DIR, canSampleProcesses, hasTaskset, pinProcess } from './harness/children.js';
import { describeMachine, planCpus } from './harness/machine.js';
import { buildParley, prepareFixture, removeFixture, type ParleyBuild, type ParleyFixture } from './harness/parley.js';
import { consoleReport, resultsMarkdown, type BenchResults } from './harness/report.js';
import { renderChart } from './harness/chart.js';
import { evaluateTargets } from './harness/targets.js';
import { runHttpScenario } from './http/scenario.js';
import { runOverloadScenario } from './overload/scenario.js';
import { runPhoneScenario } from './phone/scenario.js';
import { runUsageScenario, usageTargets } from './usage/scenario.js';
import { runVoiceScenario } from './voice/scenario.js';
import { runFleetBench } from './fleet/run.js';
import { runWebRtcBench } from './webrtc/run.js';
import { isRelayName, type RelayName } from './voice/implementations.js';
import type { TrafficShape } from './voice/protocol.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    sessions: { type: 'string' },
    relays: { type: 'string' },
    workers: { type: 'string' },
    parley: { type: 'string', default: 'built' },
    'no-pin': { type: 'boolean', default: false },
    rounds: { type: 'string' },
    shapes: { type: 'string' },
    /** Event-loop delay histogram in every server (a 10 ms timer in the server: for profiling, not for CPU figures). */
    eld: { type: 'boolean', default: false },
    /** Heap snapshots of every server under test (empty and loaded) into this directory, compared by constructor. */
    'heap-snapshot': { type: 'string' },
    /** Seconds measured per (implementation, N, round), after the warm-up (default 4; quick 3). */
    window: { type: 'string' },
    /** Parley's VOICE_PROVIDER_APPEND_MS, the coalescing cap, in both shapes (default: Parley's own default). */
    'append-ms': { type: 'string' },
    /** Keep measuring larger N after an implementation saturated (by default the rest of its N are skipped). */
    'no-skip': { type: 'boolean', default: false },
    /** Re-render the table, the targets, RESULTS.md and the chart from results/latest.json without measuring. */
    report: { type: 'boolean', default: false },
    /** postgres (default: BENCH_DATABASE_URL or the local server, a fresh database per run) or embedded (PGlite). */
    database: { type: 'string', default: 'postgres' },
    /** --only=fleet: instances per cluster measured, mints in the burst, live calls per instance. */
    'fleet-sizes': { type: 'string', default: '3,10' },
    burst: { type: 'string', default: '300' },
    'fleet-calls': { type: 'string', default: '3' },
    /** --only=webrtc: simultaneous calls of each transport. */
    'webrtc-calls': { type: 'string', default: '10' },
    /** --only=overload: run even when other work already loads the machine (the figures then say so). */
    force: { type: 'boolean', default: false },
    /** --only=phone: simulated phone calls (and as many WebSocket calls) measured, and barge-in calls. */
    'phone-calls': { type: 'string', default: '200' },
    'barge-in-calls': { type: 'string', default: '20' },
  },
  strict: true,
});

const t0 = Date.now();
const log = (line: string): void =>
  void process.stderr.write(`[bench +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
const quick = values.quick;
const only = values.only;
if (only === 'overload') {
  // Its own run: a saturated CPU would distort every other scenario (native-bench/overload/scenario.ts).
  const result = await runOverloadScenario({
    log,
    windowS: Number(values.window ?? (quick ? 5 : 10)),
    force: values.force,
    databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  process.exit(result.refused !== undefined ? 2 : result.targets.every((target) => target.ok) ? 0 : 1);
}
if (only !== undefined && !['voice', 'http', 'usage', 'fleet', 'webrtc', 'phone'].includes(only))
  throw new Error('--only must be voice, http, usage, fleet, webrtc, phone or overload');
const sessions = (values.sessions ?? (quick ? '200' : '50,100,200,400')).split(',').map(Number);
if (sessions.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error('--sessions takes positive integers, e.g. --sessions=50,200');
const relays = (values.relays ?? 'ws-relay,uws-relay,parley').split(',') as RelayName[];
for (const r of relays)
  if (!isRelayName(r))
    throw new Error(
      `unknown relay ${r} (direct, ws-relay, uws-relay, parley, parley-a<append ms>, parley-semi<MB>, parley-young<MB>)`,
    );
if (values.parley !== 'built' && values.parley !== 'tsx') throw new Error('--parley must be built or tsx');
const rounds = Number(values.rounds ?? (quick ? 2 : 3));
if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds takes a positive integer');
const shapes = (values.shapes ?? (quick ? 'echo' : 'echo,realistic')).split(',') as TrafficShape[];
for (const s of shapes) if (s !== 'echo' && s !== 'realistic') throw new Error(`unknown shape ${s} (echo, realistic)`);
if (values.window !== undefined && !(Number(values.window) >= 1 && Number(values.window) <= 600))
  throw new Error('--window takes seconds from 1 to 600');

/** --report: the last run's figures through the current report and target code (nothing is measured). */
/** `--heap-snapshot=DIR`: where the snapshots go (made if missing; kept for DevTools after the run). */
function snapshotDir(dir: string | undefined): string | undefined {
  if (dir === undefined) return undefined;
  mkdirSync(dir, { recursive: true });
  return resolve(dir);
}

function reportOnly(): void {
  const dir = join(BENCH_DIR, 'results');
  const results = JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8')) as BenchResults;
  results.targets = [...evaluateTargets(results.voice, results.http), ...usageTargets(results.usage)];
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(consoleReport(results));
  if (results.argv.some((a) => a.startsWith('--only')))
    return log('latest.json is an --only run: RESULTS.md and the chart are left as they are');
  writeResultsMarkdown(results);
  if (results.voice) {
    const shape = results.voice.settings.shapes.includes('realistic') ? 'realistic' : 'echo';
    const rows = results.voice.summaries.filter((r) => r.shape === shape);
    const m = results.machine;
    writeFileSync(
      join(dir, 'chart.svg'),
      renderChart(
        rows,
        `${shape} shape, medians of ${results.voice.settings.rounds} rounds; ${m.cpuCount} x ${m.cpuModel}, node ${m.node}, ${results.mode} run ${results.startedAt.slice(0, 10)}`,
      ),
    );
  }
  log('re-rendered native-bench/RESULTS.md and native-bench/results/chart.svg from results/latest.json');
}

/** --only=fleet: its own clusters, database and redis-server; writes results/fleet-latest.json. */
async function fleet(): Promise<void> {
  const sizes = values['fleet-sizes']!.split(',').map(Number);
  const burst = Number(values.burst);
  const perInstance = Number(values['fleet-calls']);
  if (!sizes.every((n) => Number.isInteger(n) && n >= 1 && n <= 32)) throw new Error('--fleet-sizes: 1 to 32 each');
  if (!Number.isInteger(burst) || burst < 0) throw new Error('--burst takes a whole number');
  if (!Number.isInteger(perInstance) || perInstance < 1) throw new Error('--fleet-calls takes a positive integer');
  const result = await runFleetBench({
    sizes,
    burst,
    perInstance,
    windowSeconds: Number(values.window ?? 20),
    databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    log,
  });
  const dir = join(BENCH_DIR, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'fleet-latest.json'),
    `${JSON.stringify({ argv: process.argv.slice(2), ...result }, null, 2)}\n`,
  );
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  log('wrote native-bench/results/fleet-latest.json');
}

/** --only=webrtc: one instance, N calls of each transport; writes results/webrtc-latest.json. */
async function webrtc(): Promise<void> {
  const calls = Number(values['webrtc-calls']);
  if (!Number.isInteger(calls) || calls < 1 || calls > 200) throw new Error('--webrtc-calls: 1 to 200');
  const machine = describeMachine();
  const cpuPlan = planCpus(machine.cpuCount, hasTaskset() && !values['no-pin']);
  const build = await buildParley(values.parley as 'built' | 'tsx', log);
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  assertLoopback(databaseUrl);
  const fixture = await prepareFixture(build, log, databaseUrl);
  try {
    const result = await runWebRtcBench({
      calls,
      windowSeconds: Number(values.window ?? (quick ? 5 : 10)),
      warmupSeconds: 3,
      build,
      fixture,
      serverCpus: cpuPlan.server.length > 0 ? cpuPlan.server : undefined,
      simulatorCpus: cpuPlan.simulator.length > 0 ? cpuPlan.simulator : undefined,
      log,
    });
    const dir = join(BENCH_DIR, 'results');
    mkdirSync(dir, { recursive: true });
    const record = { argv: process.argv.slice(2), machine, parley: build.note, ...result };
    writeFileSync(join(dir, 'webrtc-latest.json'), `${JSON.stringify(record, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    log('wrote native-bench/results/webrtc-latest.json');
  } finally {
    await removeFixture(fixture);
    await dropRedisKeys(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', fixture.redisPrefix);
  }
}

async function main(): Promise<void> {
  if (values.report) return reportOnly();
  if (only === 'fleet') return fleet();
  if (only === 'webrtc') return webrtc();
  if (!canSampleProcesses()) throw new Error('native-bench reads server CPU and RSS from /proc: run it on Linux');
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  assertLoopback(redisUrl);
  const started = Date.now();
  const machine = describeMachine();
  const cpuPlan = planCpus(machine.cpuCount, hasTaskset() && !values['no-pin']);
  const pin = (cpus: number[]): number[] | undefined => (cpus.length === 0 ? undefined : cpus);
  // The runner hosts the load-generator threads: pin it (and the threads it starts) to the generator cores.
  if (cpuPlan.generator.length > 0) pinProcess(process.pid, cpuPlan.generator);
  log(`${machine.cpuCount} x ${machine.cpuModel}, node ${machine.node}; ${cpuPlan.note}`);
  if (loadavg()[0]! > machine.cpuCount / 2)
    log(
      `warning: load average ${loadavg()[0]!.toFixed(2)} on ${machine.cpuCount} cores: other work is running, figures will be noisy`,
    );

  let parley: { build: ParleyBuild; fixture: ParleyFixture } | undefined;
  let parleyUnavailable: string | undefined;
  const wantsParley = only !== 'voice' || relays.some((r) => r.startsWith('parley'));
  if (wantsParley) {
    try {
      const build = await buildParley(values.parley as 'built' | 'tsx', log);
      const databaseUrl =
        values.database === 'embedded'
          ? undefined
          : (process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
      if (databaseUrl !== undefined) assertLoopback(databaseUrl);
      parley = { build, fixture: await prepareFixture(build, log, databaseUrl) };
    } catch (err) {
      parleyUnavailable = err instanceof Error ? err.message : String(err);
      log(`Parley unavailable: ${parleyUnavailable}`);
    }
  }

  const workers = Number(values.workers ?? Math.max(2, Math.min(4, cpuPlan.generator.length || machine.cpuCount)));
  const voiceSettings = {
    sessions,
    shapes,
    rounds,
    warmupMs: quick ? 1000 : 1500,
    measureMs: values.window === undefined ? (quick ? 3000 : 4000) : Math.round(Number(values.window) * 1000),
    drainMs: 1000,
    workers,
    frameMs: 20,
  };
  const results: BenchResults = {
    schema: 1,
    startedAt: new Date(started).toISOString(),
    durationSeconds: 0,
    mode: quick ? 'quick' : 'full',
    argv: process.argv.slice(2),
    machine,
    cpuPlan,
    loadAverage: { before: Math.round(loadavg()[0]! * 100) / 100, after: 0 },
    parley:
      parley === undefined
        ? { unavailable: parleyUnavailable ?? 'not needed for this run' }
        : { kind: parley.build.kind, note: parley.build.note },
    targets: [],
  };
  try {
    if (only === undefined || only === 'voice') {
      const probeDir = mkdtempSync(join(tmpdir(), 'parley-bench-probe-'));
      try {
        const voice = await runVoiceScenario({
          relays,
          shapes,
          sessions,
          rounds,
          noSkip: values['no-skip'],
          warmupMs: voiceSettings.warmupMs,
          measureMs: voiceSettings.measureMs,
          drainMs: voiceSettings.drainMs,
          workers,
          simulatorCpus: pin(cpuPlan.simulator),
          context: {
            serverCpus: pin(cpuPlan.server),
            parley,
            probe: { dir: probeDir, eld: values.eld, snapshotDir: snapshotDir(values['heap-snapshot']) },
          },
          // Both shapes run Parley's default configuration (a caller frame goes to the provider at once unless the
          // link's previous write has not drained: no fixed wait, so echo still compares at equal latency);
          // --append-ms sets the coalescing cap in both (`parley-a0`: one append per frame, never held).
          parleyEnv: {
            echo: values['append-ms'] === undefined ? {} : { VOICE_PROVIDER_APPEND_MS: values['append-ms'] },
            realistic: values['append-ms'] === undefined ? {} : { VOICE_PROVIDER_APPEND_MS: values['append-ms'] },
          },
          log,
        });
        results.voice = { ...voice, settings: voiceSettings };
      } finally {
        rmSync(probeDir, { recursive: true, force: true });
      }
    }
    if (only === undefined || only === 'http') {
      const seconds = quick ? 3 : 5;
      const http = await runHttpScenario({
        seconds,
        rounds,
        serverCpus: pin(cpuPlan.server),
        generatorCpus: pin(cpuPlan.generator),
        simulatorCpus: pin(cpuPlan.simulator),
        parley,
        ...(parleyUnavailable === undefined ? {} : { parleyUnavailable }),
        log,
      });
      results.http = { ...http, seconds };
    }
    if (only === 'phone') {
      results.phone = await runPhoneScenario({
        calls: Number(values['phone-calls']),
        windowS: values.window === undefined ? (quick ? 3 : 10) : Number(values.window),
        rampUpS: quick ? 5 : 10,
        bargeInCalls: Number(values['barge-in-calls']),
        serverCpus: pin(cpuPlan.server),
        simulatorCpus: pin(cpuPlan.simulator),
        parley,
        ...(parleyUnavailable === undefined ? {} : { parleyUnavailable }),
        log,
      });
    }
    if (only === 'usage') {
      results.usage = await runUsageScenario({
        events: 1_000_000,
        conversations: 20_000,
        requests: quick ? 100 : 300,
        serverCpus: pin(cpuPlan.server),
        simulatorCpus: pin(cpuPlan.simulator),
        parley,
        ...(parleyUnavailable === undefined ? {} : { parleyUnavailable }),
        log,
      });
    }
  } finally {
    if (parley !== undefined) {
      await removeFixture(parley.fixture);
      await dropRedisKeys(redisUrl, parley.fixture.redisPrefix);
    }
  }
  results.targets = [...evaluateTargets(results.voice, results.http), ...usageTargets(results.usage)];
  results.durationSeconds = Math.round((Date.now() - started) / 1000);
  results.loadAverage.after = Math.round(loadavg()[0]! * 100) / 100;

  const dir = join(BENCH_DIR, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(consoleReport(results));
  if (only === undefined) {
    writeResultsMarkdown(results);
    if (results.voice) {
      const shape = shapes.includes('realistic') ? 'realistic' : 'echo';
      const rows = results.voice.summaries.filter((r) => r.shape === shape);
      writeFileSync(
        join(dir, 'chart.svg'),
        renderChart(
          rows,
          `${shape} shape, medians of ${rounds} rounds; ${machine.cpuCount} x ${machine.cpuModel}, node ${machine.node}, ${results.mode} run ${results.startedAt.slice(0, 10)}`,
        ),
      );
    }
    log('wrote native-bench/results/latest.json, native-bench/RESULTS.md and native-bench/results/chart.svg');
  } else {
    log('wrote native-bench/results/latest.json (RESULTS.md and the chart are refreshed only by runs without --only)');
  }
}

const BEGIN = '<!-- bench:begin (generated by npm run bench; edit outside these markers) -->';
const END = '<!-- bench:end -->';

/** Replace only the generated block of RESULTS.md; the hand-written reading notes around it stay. */
function writeResultsMarkdown(results: BenchResults): void {
  const path = join(BENCH_DIR, 'RESULTS.md');
  const generated = `${BEGIN}\n${resultsMarkdown(results, '')}\n${END}`;
  const current = existsSync(path) ? readFileSync(path, 'utf8') : `# native-bench results\n\n${BEGIN}\n${END}\n`;
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next =
    start === -1 || end === -1
      ? `${current.trimEnd()}\n\n${generated}\n`
      : `${current.slice(0, start)}${generated}${current.slice(end + END.length)}`;
  writeFileSync(path, next);
}

/** The run's Redis keys live under a unique prefix; remove them so repeated runs leave nothing behind. */
async function dropRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } catch {
    // Redis absent: Parley would have failed to start anyway, and there is nothing to clean.
  } finally {
    redis.disconnect();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`native-bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
