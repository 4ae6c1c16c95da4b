/**
 * Voice relay scenario: for each concurrency level N, every relay under test is started fresh, N callers connect
 * through it (spread over worker threads pinned away from the server), stream 20 ms frames for warm-up + measure,
 * and the server's own CPU time and RSS are read from /proc around the measurement window.
 */
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { BENCH_DIR, sampleProcess, startChild, urlLine, type Child, type ProcSample } from '../harness/children.js';
import { mergeSorted, percentile, round } from '../harness/stats.js';
import { RELAYS, SkipRelay, type RelayContext, type RelayName } from './implementations.js';
import type { GoMessage, ReadyMessage, WorkerConfig, WorkerResult } from './protocol.js';

export interface VoiceRun {
  relay: RelayName;
  sessions: number;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  connected?: number;
  cpuMsPerSessionSecond?: number;
  rttP50Ms?: number;
  rttP99Ms?: number;
  addedP50Ms?: number;
  addedP99Ms?: number;
  rssEmptyMb?: number;
  rssLoadedMb?: number;
  rssPerSessionKb?: number;
  framesSent?: number;
  framesDropped?: number;
  generatorMaxLagMs?: number;
  generatorLateFrames?: number;
  socketsClosedEarly?: number;
  heartbeats?: number;
  heartbeatFailures?: number;
  /** Load-side health: CPU (ms per wall second) of the simulator and of the load generator (this process). */
  simulatorCpuMsPerS?: number;
  generatorCpuMsPerS?: number;
}

export interface VoiceOptions {
  relays: RelayName[];
  sessions: number[];
  warmupMs: number;
  measureMs: number;
  drainMs: number;
  workers: number;
  simulatorCpus: number[] | undefined;
  context: Omit<RelayContext, 'simulatorUrl'>;
  log: (line: string) => void;
}

export interface VoiceResult {
  simulator: string;
  runs: VoiceRun[];
  /** Largest N with zero dropped frames and round-trip p99 under 20 ms, per relay (null: none held). */
  maxHeld: Partial<Record<RelayName, number | null>>;
}

const HELD_P99_MS = 20;
/**
 * Worker threads do not inherit tsx's loader, so each one registers it before importing the TypeScript worker
 * (the tsx ESM API, resolved from here so it works whatever the working directory).
 */
const WORKER_BOOT = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./load-worker.ts', import.meta.url).href)}); });`;
const epochNow = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function once<T>(worker: Worker, type: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not answer ${type} within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: { type: string }): void => {
      if (message.type !== type) return;
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(message as T);
    };
    worker.on('message', onMessage);
    worker.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

async function measure(relay: RelayName, sessions: number, options: VoiceOptions, ctx: RelayContext, simulatorPid: number): Promise<VoiceRun> {
  const impl = RELAYS[relay];
  const started = await impl.start(ctx);
  const workers: Worker[] = [];
  try {
    await sleep(300);
    const empty = started.server === undefined ? undefined : sampleProcess(started.server.pid);
    const count = Math.max(1, Math.min(options.workers, sessions));
    let first = 0;
    for (let i = 0; i < count; i++) {
      const callers = Math.floor(sessions / count) + (i < sessions % count ? 1 : 0);
      const config: WorkerConfig = {
        workerId: i, protocol: impl.protocol, firstCaller: first, callers, totalCallers: sessions, frameMs: 20, connectConcurrency: 16,
        ...(started.url === undefined ? {} : { url: started.url }),
        ...(started.parley === undefined ? {} : { parley: started.parley }),
      };
      first += callers;
      workers.push(new Worker(WORKER_BOOT, { eval: true, workerData: config }));
    }
    const ready = await Promise.all(workers.map((w) => once<ReadyMessage>(w, 'ready', 120_000)));
    const connected = ready.reduce((n, r) => n + r.connected, 0);
    const firstError = ready.find((r) => r.firstError !== undefined)?.firstError;
    if (ready.some((r) => r.notBuilt)) throw new SkipRelay(firstError ?? 'not built yet');
    if (connected === 0) return { relay, sessions, status: 'failed', reason: `no caller connected: ${firstError ?? 'unknown'}` };

    const go: GoMessage = { type: 'go', startEpoch: epochNow() + 200, warmupMs: options.warmupMs, measureMs: options.measureMs, drainMs: options.drainMs };
    const done = Promise.all(workers.map((w) => once<WorkerResult>(w, 'done', go.warmupMs + go.measureMs + go.drainMs + 30_000)));
    for (const w of workers) w.postMessage(go);
    const pid = started.server?.pid;
    await sleep(go.startEpoch + go.warmupMs - epochNow());
    const cpuStart: ProcSample | undefined = pid === undefined ? undefined : sampleProcess(pid);
    const simStart = sampleProcess(simulatorPid);
    const genStart = process.cpuUsage();
    await sleep(go.startEpoch + go.warmupMs + go.measureMs - epochNow());
    const cpuEnd: ProcSample | undefined = pid === undefined ? undefined : sampleProcess(pid);
    const simEnd = sampleProcess(simulatorPid);
    const gen = process.cpuUsage(genStart);
    const wallS = (simEnd.at - simStart.at) / 1000;
    const results = await done;
    const rtts = mergeSorted(results.map((r) => r.rtts));
    const sum = (pick: (r: WorkerResult) => number): number => results.reduce((n, r) => n + pick(r), 0);
    const framesSent = sum((r) => r.measuredSent);
    const run: VoiceRun = {
      relay, sessions, status: 'ok', connected,
      rttP50Ms: round(percentile(rtts, 50), 3),
      rttP99Ms: round(percentile(rtts, 99), 3),
      framesSent,
      framesDropped: framesSent - sum((r) => r.measuredReceived),
      generatorMaxLagMs: round(Math.max(...results.map((r) => r.maxLagMs)), 1),
      generatorLateFrames: sum((r) => r.lateFrames),
      socketsClosedEarly: sum((r) => r.socketsClosedEarly),
      simulatorCpuMsPerS: round((simEnd.cpuMs - simStart.cpuMs) / wallS, 0),
      generatorCpuMsPerS: round((gen.user + gen.system) / 1000 / wallS, 0),
    };
    if (connected < sessions) run.reason = `${sessions - connected} callers failed to connect: ${firstError ?? ''}`;
    if (impl.protocol === 'parley') {
      run.heartbeats = sum((r) => r.heartbeats);
      run.heartbeatFailures = sum((r) => r.heartbeatFailures);
    }
    if (empty !== undefined && cpuStart !== undefined && cpuEnd !== undefined) {
      const seconds = (cpuEnd.at - cpuStart.at) / 1000;
      run.cpuMsPerSessionSecond = round((cpuEnd.cpuMs - cpuStart.cpuMs) / (connected * seconds), 3);
      run.rssEmptyMb = round(empty.rssBytes / 2 ** 20, 1);
      run.rssLoadedMb = round(cpuEnd.rssBytes / 2 ** 20, 1);
      run.rssPerSessionKb = round((cpuEnd.rssBytes - empty.rssBytes) / 1024 / connected, 1);
    }
    return run;
  } finally {
    await Promise.all(workers.map(async (w) => {
      w.postMessage({ type: 'close' });
      await once(w, 'closed', 5000).catch(() => undefined);
      await w.terminate();
    }));
    await started.stop();
  }
}

function saturated(run: VoiceRun): boolean {
  if (run.status !== 'ok') return true;
  const dropRate = (run.framesDropped ?? 0) / Math.max(1, run.framesSent ?? 1);
  return dropRate > 0.05 || (run.rttP99Ms ?? 0) > 500 || (run.connected ?? 0) < run.sessions * 0.9;
}

export async function runVoiceScenario(options: VoiceOptions): Promise<VoiceResult> {
  const simulator: Child = await startChild({
    name: 'voice simulator',
    script: join(BENCH_DIR, '..', 'src/providers/voice/simulator/main.ts'),
    args: ['--port', '0', '--echo'],
    cpus: options.simulatorCpus,
    ready: urlLine,
  });
  const ctx: RelayContext = { ...options.context, simulatorUrl: simulator.info };
  const runs: VoiceRun[] = [];
  const skipped = new Map<RelayName, string>();
  // `direct` runs first at every N: the relays' added latency is measured against it at the same load.
  const order = ['direct' as RelayName, ...options.relays.filter((r) => r !== 'direct')];
  try {
    for (const sessions of [...options.sessions].sort((a, b) => a - b)) {
      for (const relay of order) {
        const skip = skipped.get(relay);
        if (skip !== undefined) {
          runs.push({ relay, sessions, status: 'skipped', reason: skip });
          continue;
        }
        options.log(`voice: ${relay} x ${sessions} sessions...`);
        let run: VoiceRun;
        try {
          run = await measure(relay, sessions, options, ctx, simulator.pid);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          if (err instanceof SkipRelay) {
            options.log(`voice: ${relay} skipped: ${message}`);
            skipped.set(relay, message);
            runs.push({ relay, sessions, status: 'skipped', reason: message });
            continue;
          }
          run = { relay, sessions, status: 'failed', reason: message };
        }
        runs.push(run);
        if (saturated(run)) skipped.set(relay, `saturated at ${sessions} sessions (drops, p99 > 500 ms or failed connects)`);
      }
    }
  } finally {
    await simulator.stop();
  }
  for (const run of runs) {
    const direct = runs.find((r) => r.relay === 'direct' && r.sessions === run.sessions && r.status === 'ok');
    if (run.relay === 'direct' || run.status !== 'ok' || direct === undefined) continue;
    run.addedP50Ms = round(run.rttP50Ms! - direct.rttP50Ms!, 3);
    run.addedP99Ms = round(run.rttP99Ms! - direct.rttP99Ms!, 3);
  }
  const maxHeld: VoiceResult['maxHeld'] = {};
  for (const relay of order) {
    const held = runs.filter((r) => r.relay === relay && r.status === 'ok' && r.framesDropped === 0 && (r.rttP99Ms ?? Infinity) < HELD_P99_MS && r.connected === r.sessions);
    if (!runs.some((r) => r.relay === relay && r.status === 'ok')) continue;
    maxHeld[relay] = held.length === 0 ? null : Math.max(...held.map((r) => r.sessions));
  }
  return { simulator: simulator.info, runs, maxHeld };
}
