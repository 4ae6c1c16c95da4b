/**
 * Voice relay scenario: for each concurrency level N, every relay under test is started fresh, N callers connect
 * through it (spread over worker threads pinned away from the server), stream 20 ms frames for warm-up + measure,
 * and the server's own CPU time and RSS are read from /proc around the measurement window.
 */
import { Worker } from 'node:worker_threads';
import { readProbe, sampleProcess, startSimulator, type Child, type ProcSample } from '../harness/children.js';
import { compareSnapshots, formatComparison, type HeapComparison } from '../harness/heap-snapshot.js';
import { mergeSorted, percentile, round } from '../harness/stats.js';
import { relayOf, SkipRelay, type RelayContext, type RelayName } from './implementations.js';
import { residenceBetween, scrapeResidence, type ResidenceFigures } from './residence.js';
import type { GoMessage, ReadyMessage, TrafficShape, WorkerConfig, WorkerResult } from './protocol.js';

/** One measurement: one (shape, implementation, N) in one round, on a freshly started server. */
export interface VoiceRun {
  shape: TrafficShape;
  round: number;
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
  /** V8 heap in use after two full GCs (probe), empty and at the end of the window, and the difference / N. */
  heapEmptyMb?: number;
  heapLoadedMb?: number;
  heapPerSessionKb?: number;
  /**
   * The RSS at the end of the window (probe, before its GCs) in three parts, MB: V8's young generation, the rest of
   * V8's heap (old generation, code, large objects), and everything outside V8's heap (native: sockets, buffers).
   */
  rssParts?: RssParts;
  /** The heap's growth per session by constructor, from heap snapshots (only with --heap-snapshot). */
  heapSnapshot?: HeapComparison;
  /** Event-loop delay in the window (only with --eld). */
  eldP99Ms?: number;
  eldMaxMs?: number;
  /** GC in the window (only with --eld): per kind (1 scavenge, 2 mark-compact, 4 incremental, 8 weak callbacks). */
  gc?: Record<string, { count: number; totalMs: number; maxMs: number }>;
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
  /** Parley's own residence histograms over the window (its /metrics), working time per direction and window wait. */
  residence?: ResidenceFigures;
}

/** Median and range over a figure's rounds. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** One (shape, implementation, N) over all its rounds: medians, ranges, and ratios paired round by round. */
export interface VoiceSummary {
  shape: TrafficShape;
  relay: RelayName;
  sessions: number;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  rounds: number;
  connected?: number;
  /** Medians (the chart and the targets read these names). */
  cpuMsPerSessionSecond?: number;
  rttP50Ms?: number;
  rttP99Ms?: number;
  addedP50Ms?: number;
  addedP99Ms?: number;
  cpu?: Spread;
  rttP99?: Spread;
  /** Relay RTT minus `direct` RTT of the same round, per round. */
  addedP99?: Spread;
  /** CPU per session-second over uws-relay's / ws-relay's in the same round, per round. */
  cpuVsUws?: Spread;
  cpuVsWs?: Spread;
  rssLoadedMb?: number;
  rssParts?: RssParts;
  heapPerSessionKb?: number;
  /** Medians over the rounds of Parley's residence figures (ms). */
  residence?: ResidenceFigures;
  eldP99Ms?: number;
  eldMaxMs?: number;
  framesSent?: number;
  framesDropped?: number;
  generatorMaxLagMs?: number;
  simulatorCpuMsPerS?: number;
  generatorCpuMsPerS?: number;
  socketsClosedEarly?: number;
}

export interface VoiceOptions {
  relays: RelayName[];
  shapes: TrafficShape[];
  sessions: number[];
  rounds: number;
  warmupMs: number;
  measureMs: number;
  drainMs: number;
  workers: number;
  simulatorCpus: number[] | undefined;
  context: Omit<RelayContext, 'simulatorUrl' | 'parleyEnv'>;
  /** Measure every N even after an implementation saturated (on a busy machine saturation is the machine's). */
  noSkip?: boolean;
  /** Parley's environment per shape (the default configuration unless --append-ms sets the coalescing cap). */
  parleyEnv: Record<TrafficShape, Record<string, string>>;
  log: (line: string) => void;
}

/** RSS in parts (MB, or KB per session in a slope): V8's young generation, the rest of V8's heap, outside V8's heap. */
export interface RssParts {
  young: number;
  restOfV8: number;
  outsideV8: number;
}

/** Least-squares slope of RSS against N over the run's N values (median RSS per N): the marginal cost of a call. */
export interface RssSlope {
  shape: TrafficShape;
  relay: RelayName;
  kbPerSession: number;
  /** The same slope for each part of the RSS (probe, end of the window): where a call's memory goes. */
  parts?: RssParts;
  /** The N values it was fitted on. */
  sessions: number[];
}

export interface VoiceResult {
  simulator: string;
  runs: VoiceRun[];
  summaries: VoiceSummary[];
  rssSlopes: RssSlope[];
  /** Largest N with zero dropped frames and round-trip p99 (median over rounds) under 20 ms, per shape and relay. */
  maxHeld: Partial<Record<TrafficShape, Partial<Record<RelayName, number | null>>>>;
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
    const timer = setTimeout(
      () => reject(new Error(`worker did not answer ${type} within ${timeoutMs} ms`)),
      timeoutMs,
    );
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

async function measure(
  shape: TrafficShape,
  roundNo: number,
  relay: RelayName,
  sessions: number,
  options: VoiceOptions,
  ctx: RelayContext,
  simulatorPid: number,
): Promise<VoiceRun> {
  const impl = relayOf(relay);
  const t0 = Date.now();
  const started = await impl.start(ctx);
  const workers: Worker[] = [];
  const probe = ctx.probe;
  try {
    await sleep(300);
    const empty = started.server === undefined ? undefined : sampleProcess(started.server.pid);
    const heapEmpty =
      started.server === undefined || probe === undefined
        ? undefined
        : await readProbe(started.server.pid, probe, 'heap');
    const count = Math.max(1, Math.min(options.workers, sessions));
    let first = 0;
    for (let i = 0; i < count; i++) {
      const callers = Math.floor(sessions / count) + (i < sessions % count ? 1 : 0);
      const config: WorkerConfig = {
        workerId: i,
        protocol: impl.protocol,
        shape,
        firstCaller: first,
        callers,
        totalCallers: sessions,
        frameMs: 20,
        connectConcurrency: 16,
        ...(started.url === undefined ? {} : { url: started.url }),
        ...(started.parley === undefined ? {} : { parley: started.parley }),
      };
      first += callers;
      workers.push(new Worker(WORKER_BOOT, { eval: true, workerData: config }));
    }
    const ready = await Promise.all(workers.map((w) => once<ReadyMessage>(w, 'ready', 120_000)));
    options.log(
      `  ${relay}: server started and ${sessions} callers connected in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    const connected = ready.reduce((n, r) => n + r.connected, 0);
    const firstError = ready.find((r) => r.firstError !== undefined)?.firstError;
    if (ready.some((r) => r.notBuilt)) throw new SkipRelay(firstError ?? 'not built yet');
    if (connected === 0)
      return {
        shape,
        round: roundNo,
        relay,
        sessions,
        status: 'failed',
        reason: `no caller connected: ${firstError ?? 'unknown'}`,
      };

    const go: GoMessage = {
      type: 'go',
      startEpoch: epochNow() + 200,
      warmupMs: options.warmupMs,
      measureMs: options.measureMs,
      drainMs: options.drainMs,
    };
    const done = Promise.all(
      workers.map((w) => once<WorkerResult>(w, 'done', go.warmupMs + go.measureMs + go.drainMs + 30_000)),
    );
    for (const w of workers) w.postMessage(go);
    const pid = started.server?.pid;
    await sleep(go.startEpoch + go.warmupMs - epochNow());
    // Scraped just outside the CPU window, so the scrapes are not billed to the relay.
    const metrics = started.metrics;
    const residenceStart = metrics ? await scrapeResidence(metrics.baseUrl, metrics.token) : undefined;
    const cpuStart: ProcSample | undefined = pid === undefined ? undefined : sampleProcess(pid);
    const simStart = sampleProcess(simulatorPid);
    const genStart = process.cpuUsage();
    if (pid !== undefined && probe?.eld) void readProbe(pid, probe, 'eld');
    await sleep(go.startEpoch + go.warmupMs + go.measureMs - epochNow());
    const cpuEnd: ProcSample | undefined = pid === undefined ? undefined : sampleProcess(pid);
    const simEnd = sampleProcess(simulatorPid);
    const gen = process.cpuUsage(genStart);
    const residenceEnd = metrics ? await scrapeResidence(metrics.baseUrl, metrics.token) : undefined;
    // After the CPU window: the probe's full GCs must not be billed to the relay.
    const eld = pid !== undefined && probe?.eld ? await readProbe(pid, probe, 'eld') : undefined;
    const heapLoaded = pid !== undefined && probe !== undefined ? await readProbe(pid, probe, 'heap') : undefined;
    const wallS = (simEnd.at - simStart.at) / 1000;
    const results = await done;
    const rtts = mergeSorted(results.map((r) => r.rtts));
    const sum = (pick: (r: WorkerResult) => number): number => results.reduce((n, r) => n + pick(r), 0);
    const framesSent = sum((r) => r.measuredSent);
    const run: VoiceRun = {
      shape,
      round: roundNo,
      relay,
      sessions,
      status: 'ok',
      connected,
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
    if (residenceStart !== undefined && residenceEnd !== undefined)
      run.residence = residenceBetween(residenceStart, residenceEnd);
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
    if (heapEmpty?.usedHeapSize !== undefined && heapLoaded?.usedHeapSize !== undefined) {
      run.heapEmptyMb = round(heapEmpty.usedHeapSize / 2 ** 20, 2);
      run.heapLoadedMb = round(heapLoaded.usedHeapSize / 2 ** 20, 2);
      run.heapPerSessionKb = round((heapLoaded.usedHeapSize - heapEmpty.usedHeapSize) / 1024 / connected, 2);
    }
    if (
      heapLoaded?.rssBeforeGc !== undefined &&
      heapLoaded.youngBytes !== undefined &&
      heapLoaded.v8Bytes !== undefined
    ) {
      const mb = (bytes: number): number => round(bytes / 2 ** 20, 1);
      run.rssParts = {
        young: mb(heapLoaded.youngBytes),
        restOfV8: mb(heapLoaded.v8Bytes - heapLoaded.youngBytes),
        outsideV8: mb(heapLoaded.rssBeforeGc - heapLoaded.v8Bytes),
      };
    }
    if (heapEmpty?.snapshot !== undefined && heapLoaded?.snapshot !== undefined) {
      run.heapSnapshot = compareSnapshots(heapEmpty.snapshot, heapLoaded.snapshot, connected);
      options.log(
        `  ${relay}, ${shape}, N=${sessions}: ${formatComparison(run.heapSnapshot)}\n  (snapshots: ${heapEmpty.snapshot}, ${heapLoaded.snapshot})`,
      );
    }
    if (eld !== undefined) {
      run.eldP99Ms = eld.p99Ms;
      run.eldMaxMs = eld.maxMs;
      if (eld.gc !== undefined) run.gc = eld.gc as unknown as VoiceRun['gc'];
    }
    return run;
  } finally {
    await Promise.all(
      workers.map(async (w) => {
        w.postMessage({ type: 'close' });
        await once(w, 'closed', 5000).catch(() => undefined);
        await w.terminate();
      }),
    );
    await started.stop();
  }
}

function saturated(run: VoiceSummary): boolean {
  if (run.status !== 'ok') return true;
  const dropRate = (run.framesDropped ?? 0) / Math.max(1, run.framesSent ?? 1);
  return dropRate > 0.05 || (run.rttP99Ms ?? 0) > 500 || (run.connected ?? 0) < run.sessions * 0.9;
}

function spread(values: number[]): Spread | undefined {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = v.length >> 1;
  const median = v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return { median: round(median, 3), min: round(v[0]!, 3), max: round(v[v.length - 1]!, 3) };
}

/** Medians over the rounds of one (shape, relay, N), and per-round ratios against the baselines of the same round. */
function summarize(shape: TrafficShape, relay: RelayName, sessions: number, runs: VoiceRun[]): VoiceSummary {
  const mine = runs.filter((r) => r.shape === shape && r.relay === relay && r.sessions === sessions);
  const ok = mine.filter((r) => r.status === 'ok');
  if (ok.length === 0) {
    const first = mine[0];
    return {
      shape,
      relay,
      sessions,
      status: first?.status === 'skipped' ? 'skipped' : 'failed',
      rounds: mine.length,
      ...(first?.reason ? { reason: first.reason } : {}),
    };
  }
  const sameRound = (other: RelayName, r: VoiceRun): VoiceRun | undefined =>
    runs.find(
      (o) =>
        o.shape === shape && o.relay === other && o.sessions === sessions && o.round === r.round && o.status === 'ok',
    );
  const pick = (f: (r: VoiceRun) => number | undefined): number[] =>
    ok.map(f).filter((x): x is number => x !== undefined && Number.isFinite(x));
  const ratio = (other: RelayName): number[] =>
    ok.flatMap((r) => {
      const o = sameRound(other, r);
      return o?.cpuMsPerSessionSecond && r.cpuMsPerSessionSecond !== undefined
        ? [r.cpuMsPerSessionSecond / o.cpuMsPerSessionSecond]
        : [];
    });
  const added = (p: 'rttP50Ms' | 'rttP99Ms'): number[] =>
    ok.flatMap((r) => {
      const d = sameRound('direct', r);
      return d?.[p] !== undefined && r[p] !== undefined ? [r[p]! - d[p]!] : [];
    });
  const cpu = spread(pick((r) => r.cpuMsPerSessionSecond));
  const rttP99 = spread(pick((r) => r.rttP99Ms));
  const addedP99 = relay === 'direct' ? undefined : spread(added('rttP99Ms'));
  const cpuVsUws = relay === 'uws-relay' || relay === 'direct' ? undefined : spread(ratio('uws-relay'));
  const cpuVsWs = relay === 'ws-relay' || relay === 'direct' ? undefined : spread(ratio('ws-relay'));
  const med = (values: number[]): number | undefined => spread(values)?.median;
  const sum = (f: (r: VoiceRun) => number | undefined): number => ok.reduce((n, r) => n + (f(r) ?? 0), 0);
  const summary: VoiceSummary = {
    shape,
    relay,
    sessions,
    status: 'ok',
    rounds: ok.length,
    connected: Math.min(...ok.map((r) => r.connected ?? 0)),
    framesSent: sum((r) => r.framesSent),
    framesDropped: sum((r) => r.framesDropped),
    generatorMaxLagMs: Math.max(...pick((r) => r.generatorMaxLagMs)),
    socketsClosedEarly: sum((r) => r.socketsClosedEarly),
  };
  const set = <K extends keyof VoiceSummary>(key: K, value: VoiceSummary[K] | undefined): void => {
    if (value !== undefined) summary[key] = value;
  };
  set('cpu', cpu);
  set('cpuMsPerSessionSecond', cpu?.median);
  set('rttP50Ms', med(pick((r) => r.rttP50Ms)));
  set('rttP99', rttP99);
  set('rttP99Ms', rttP99?.median);
  set('addedP50Ms', relay === 'direct' ? undefined : med(added('rttP50Ms')));
  set('addedP99', addedP99);
  set('addedP99Ms', addedP99?.median);
  set('cpuVsUws', cpuVsUws);
  set('cpuVsWs', cpuVsWs);
  set('rssLoadedMb', med(pick((r) => r.rssLoadedMb)));
  const parts = ok.map((r) => r.rssParts).filter((p): p is RssParts => p !== undefined);
  if (parts.length === ok.length && parts.length > 0) {
    summary.rssParts = {
      young: med(parts.map((p) => p.young))!,
      restOfV8: med(parts.map((p) => p.restOfV8))!,
      outsideV8: med(parts.map((p) => p.outsideV8))!,
    };
  }
  set('heapPerSessionKb', med(pick((r) => r.heapPerSessionKb)));
  const residences = ok.map((r) => r.residence).filter((x): x is ResidenceFigures => x !== undefined);
  if (residences.length > 0) {
    const figure = (k: keyof ResidenceFigures): number => med(residences.map((x) => x[k])) ?? Number.NaN;
    summary.residence = {
      inP50Ms: figure('inP50Ms'),
      inP99Ms: figure('inP99Ms'),
      outP50Ms: figure('outP50Ms'),
      outP99Ms: figure('outP99Ms'),
      waitP50Ms: figure('waitP50Ms'),
      waitP99Ms: figure('waitP99Ms'),
      inFrames: figure('inFrames'),
      outFrames: figure('outFrames'),
    };
  }
  set('eldP99Ms', med(pick((r) => r.eldP99Ms)));
  set('eldMaxMs', med(pick((r) => r.eldMaxMs)));
  set('simulatorCpuMsPerS', med(pick((r) => r.simulatorCpuMsPerS)));
  set('generatorCpuMsPerS', med(pick((r) => r.generatorCpuMsPerS)));
  const failed = mine.find((r) => r.status !== 'ok' || r.reason);
  if (failed?.reason) summary.reason = `round ${failed.round}: ${failed.reason}`;
  return summary;
}

/** Least squares: slope of y against x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

const SIMULATOR_FAULTS: Record<TrafficShape, string> = { echo: 'echo', realistic: 'echo=paced' };

export async function runVoiceScenario(options: VoiceOptions): Promise<VoiceResult> {
  const runs: VoiceRun[] = [];
  const summaries: VoiceSummary[] = [];
  const order = ['direct' as RelayName, ...options.relays.filter((r) => r !== 'direct')];
  const simulators: string[] = [];
  for (const shape of options.shapes) {
    const simulator: Child = await startSimulator(options.simulatorCpus, SIMULATOR_FAULTS[shape]);
    simulators.push(`${shape}: ${simulator.info} (--faults ${SIMULATOR_FAULTS[shape]})`);
    const ctx: RelayContext = { ...options.context, simulatorUrl: simulator.info };
    const skipped = new Map<RelayName, string>();
    try {
      for (const sessions of [...options.sessions].sort((a, b) => a - b)) {
        for (let roundNo = 1; roundNo <= options.rounds; roundNo++) {
          // Interleaved rounds (A B C, then C B A, ...): drift in the machine's load hits every implementation alike.
          // `direct` opens every round: the relays' added latency is paired with it.
          const relays = order.slice(1);
          if (roundNo % 2 === 0) relays.reverse();
          for (const relay of ['direct' as RelayName, ...relays]) {
            const skip = skipped.get(relay);
            if (skip !== undefined) {
              runs.push({ shape, round: roundNo, relay, sessions, status: 'skipped', reason: skip });
              continue;
            }
            options.log(`voice ${shape}: ${relay} x ${sessions} sessions, round ${roundNo}/${options.rounds}...`);
            let run: VoiceRun;
            try {
              run = await measure(
                shape,
                roundNo,
                relay,
                sessions,
                options,
                { ...ctx, parleyEnv: options.parleyEnv[shape] },
                simulator.pid,
              );
            } catch (err) {
              const message = err instanceof Error ? err.message : String(err);
              if (err instanceof SkipRelay) {
                options.log(`voice: ${relay} skipped: ${message}`);
                skipped.set(relay, message);
                runs.push({ shape, round: roundNo, relay, sessions, status: 'skipped', reason: message });
                continue;
              }
              run = { shape, round: roundNo, relay, sessions, status: 'failed', reason: message };
            }
            runs.push(run);
          }
        }
        for (const relay of order) {
          const summary = summarize(shape, relay, sessions, runs);
          summaries.push(summary);
          if (!options.noSkip && !skipped.has(relay) && saturated(summary))
            skipped.set(relay, `saturated at ${sessions} sessions (drops, p99 > 500 ms or failed connects)`);
        }
      }
    } finally {
      await simulator.stop();
    }
  }
  for (const run of runs) {
    const direct = runs.find(
      (r) =>
        r.relay === 'direct' &&
        r.shape === run.shape &&
        r.round === run.round &&
        r.sessions === run.sessions &&
        r.status === 'ok',
    );
    if (run.relay === 'direct' || run.status !== 'ok' || direct === undefined) continue;
    run.addedP50Ms = round(run.rttP50Ms! - direct.rttP50Ms!, 3);
    run.addedP99Ms = round(run.rttP99Ms! - direct.rttP99Ms!, 3);
  }
  const maxHeld: VoiceResult['maxHeld'] = {};
  const rssSlopes: RssSlope[] = [];
  for (const shape of options.shapes) {
    const held: Partial<Record<RelayName, number | null>> = {};
    for (const relay of order) {
      const mine = summaries.filter((r) => r.shape === shape && r.relay === relay && r.status === 'ok');
      if (mine.length === 0) continue;
      const good = mine.filter(
        (r) => r.framesDropped === 0 && (r.rttP99Ms ?? Infinity) < HELD_P99_MS && r.connected === r.sessions,
      );
      held[relay] = good.length === 0 ? null : Math.max(...good.map((r) => r.sessions));
      const points = mine
        .filter((r) => r.rssLoadedMb !== undefined)
        .map((r) => ({ x: r.sessions, y: r.rssLoadedMb! * 1024 }));
      if (relay !== 'direct' && points.length >= 2) {
        const withParts = mine.filter((r) => r.rssParts !== undefined);
        const partSlope = (key: keyof RssParts): number =>
          round(slope(withParts.map((r) => ({ x: r.sessions, y: r.rssParts![key] * 1024 }))), 1);
        rssSlopes.push({
          shape,
          relay,
          kbPerSession: round(slope(points), 1),
          sessions: points.map((p) => p.x),
          ...(withParts.length === points.length
            ? {
                parts: {
                  young: partSlope('young'),
                  restOfV8: partSlope('restOfV8'),
                  outsideV8: partSlope('outsideV8'),
                },
              }
            : {}),
        });
      }
    }
    maxHeld[shape] = held;
  }
  return { simulator: simulators.join('; '), runs, summaries, rssSlopes, maxHeld };
}
