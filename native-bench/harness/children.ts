/**
 * Child processes of the bench: every server under test (and the provider simulator) runs in its own process so
 * its CPU time and RSS are its own, read from /proc/<pid>. Each child is started and killed by the runner.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BENCH_DIR = join(ROOT, 'native-bench');

/** How a server under test is probed from inside (harness/probe.mjs): heap after GC, event-loop delay. */
export interface ProbeOptions {
  dir: string;
  /** Also run the event-loop delay monitor (profiling runs only: it is a 10 ms timer). */
  eld: boolean;
  /** Write a heap snapshot into this directory with every heap sample (`--heap-snapshot=DIR`: slow, profiling only). */
  snapshotDir?: string | undefined;
}

/** Node flags and environment that preload the probe into a server under test. */
export function probeLaunch(probe: ProbeOptions | undefined): { nodeArgs: string[]; env: Record<string, string> } {
  if (probe === undefined) return { nodeArgs: [], env: {} };
  return {
    nodeArgs: ['--import', pathToFileURL(join(BENCH_DIR, 'harness', 'probe.mjs')).href],
    env: {
      BENCH_PROBE_DIR: probe.dir,
      BENCH_PROBE_ELD: probe.eld ? '1' : '0',
      ...(probe.snapshotDir === undefined ? {} : { BENCH_PROBE_SNAPSHOT_DIR: probe.snapshotDir }),
    },
  };
}

/**
 * Ask a probed server for a sample: SIGWINCH = heap after two full GCs, SIGUSR2 = event-loop delay since the last
 * SIGUSR2. Resolves with the record it wrote, or undefined when it did not answer within `timeoutMs`.
 */
export async function readProbe(
  pid: number,
  probe: ProbeOptions,
  kind: 'heap' | 'eld',
  // A heap snapshot of a loaded server takes seconds to write.
  timeoutMs = probe.snapshotDir === undefined ? 5000 : 120_000,
): Promise<(Record<string, number> & { snapshot?: string }) | undefined> {
  const before = new Set(existsSync(probe.dir) ? readdirSync(probe.dir) : []);
  try {
    process.kill(pid, kind === 'heap' ? 'SIGWINCH' : 'SIGUSR2');
  } catch {
    return undefined;
  }
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const fresh = readdirSync(probe.dir).filter(
      (f) => f.startsWith(`${pid}-`) && f.endsWith('.json') && !before.has(f),
    );
    for (const file of fresh) {
      try {
        const record = JSON.parse(readFileSync(join(probe.dir, file), 'utf8')) as Record<string, number> & {
          kind?: string;
          snapshot?: string;
        };
        if (record.kind === kind) return record;
      } catch {
        // still being written: read it on the next pass
      }
    }
  }
  return undefined;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** The bench only ever talks to loopback: a public or LAN address is refused before any traffic is sent. */
export function assertLoopback(target: string): void {
  const host = new URL(target).hostname;
  if (!LOOPBACK.has(host) && !/^127\.\d+\.\d+\.\d+$/.test(host)) {
    throw new Error(`native-bench refuses to run against ${host}: loopback targets only (127.0.0.1, ::1, localhost)`);
  }
}

export interface StartOptions {
  name: string;
  /** A .ts file (run with `node --import tsx`) or a built .js file. */
  script: string;
  args?: string[];
  /** Extra node flags before the script (profiling: --cpu-prof). */
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** CPUs to pin the child to with taskset (ignored when taskset is missing or the list is empty). */
  cpus?: number[] | undefined;
  /** Resolves with the first stdout line that passes, or rejects on exit or after timeoutMs. */
  ready: (line: string) => string | undefined;
  timeoutMs?: number;
}

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** What `ready` extracted (a URL or a port). */
  readonly info: string;
  readonly process: ChildProcess;
  /** Last lines of stderr (for error messages). */
  stderrTail(): string;
  stop(): Promise<void>;
}

let tasksetPath: string | null | undefined;
export function hasTaskset(): boolean {
  if (tasksetPath === undefined) {
    const found = spawnSync('sh', ['-c', 'command -v taskset'], { encoding: 'utf8' });
    tasksetPath = found.status === 0 ? found.stdout.trim() : null;
  }
  return tasksetPath !== null;
}

/** Pin an already running process (all its threads) to `cpus`. Returns false when that is not possible. */
export function pinProcess(pid: number, cpus: number[]): boolean {
  if (!hasTaskset() || cpus.length === 0) return false;
  return spawnSync('taskset', ['-a', '-p', '-c', cpus.join(','), String(pid)], { stdio: 'ignore' }).status === 0;
}

export async function startChild(options: StartOptions): Promise<Child> {
  const nodeArgs = options.script.endsWith('.ts') ? ['--import', 'tsx', options.script] : [options.script];
  const command = [process.execPath, ...(options.nodeArgs ?? []), ...nodeArgs, ...(options.args ?? [])];
  const pinned = options.cpus !== undefined && options.cpus.length > 0 && hasTaskset();
  // taskset execs the command, so the pid we get is node's own pid.
  const argv = pinned ? ['taskset', '-c', options.cpus!.join(','), ...command] : command;
  // stdout goes to a file, not a pipe: a server that logs every request (Parley's access log) then writes as it
  // would to a log collector that keeps up, instead of blocking on this busy process reading a pipe (seen in a CPU
  // profile: pino's synchronous write waiting on the full pipe, ~0.4 ms per access-log line).
  const stdoutDir = mkdtempSync(join(tmpdir(), 'parley-bench-out-'));
  const stdoutPath = join(stdoutDir, `${options.name}.log`);
  const stdoutFd = openSync(stdoutPath, 'w');
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', stdoutFd, 'pipe'],
  });
  closeSync(stdoutFd);
  const tail: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    tail.push(line);
    if (tail.length > 30) tail.shift();
  });
  const info = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      fail(new Error(`${options.name} did not become ready within ${options.timeoutMs ?? 30_000} ms`));
    }, options.timeoutMs ?? 30_000);
    const onExit = (code: number | null): void =>
      fail(new Error(`${options.name} exited (${code}) before it was ready:\n${tail.join('\n')}`));
    let scanned = 0;
    const poll = setInterval(() => {
      const text = readFileSync(stdoutPath, 'utf8');
      const complete = text.lastIndexOf('\n') + 1;
      for (const line of text.slice(scanned, complete).split('\n')) {
        const found = line === '' ? undefined : options.ready(line);
        if (found === undefined) continue;
        done();
        return resolve(found);
      }
      scanned = complete;
    }, 20);
    function done(): void {
      clearTimeout(timer);
      clearInterval(poll);
      child.off('exit', onExit);
    }
    function fail(err: Error): void {
      done();
      child.kill('SIGKILL');
      reject(err);
    }
    child.once('exit', onExit);
    child.once('error', (err) => fail(err));
  });
  // BENCH_KEEP_OUTPUT=DIR keeps each child's stdout there (e.g. with --trace-gc in BENCH_PARLEY_NODE_ARGS).
  child.once('exit', () => {
    const keep = process.env.BENCH_KEEP_OUTPUT;
    if (keep !== undefined && keep !== '') {
      mkdirSync(keep, { recursive: true });
      cpSync(stdoutPath, join(keep, `${options.name}-${child.pid}.log`));
    }
    rmSync(stdoutDir, { recursive: true, force: true });
  });
  let stopping: Promise<void> | undefined;
  return {
    name: options.name,
    pid: child.pid!,
    info,
    process: child,
    stderrTail: () => tail.join('\n'),
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const hard = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(hard);
          resolve();
        });
        child.kill('SIGTERM');
      });
      return stopping;
    },
  };
}

/** First stdout line that is a ws:// or http:// URL (the simulator and the baselines print one). */
export const urlLine = (line: string): string | undefined =>
  /^(ws|http)s?:\/\//.test(line.trim()) ? line.trim() : undefined;

/** Parley's GPT-Live simulator as a child process on a free loopback port (`faults`: its --faults flag); `info` is its URL. */
export function startSimulator(cpus: number[] | undefined, faults?: string): Promise<Child> {
  return startChild({
    name: 'voice simulator',
    script: join(BENCH_DIR, '..', 'src/providers/voice/simulator/main.ts'),
    args: ['--port', '0', ...(faults !== undefined ? ['--faults', faults] : [])],
    cpus,
    ready: urlLine,
  });
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(out.stdout?.trim());
    clockTicks = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

export interface ProcSample {
  /** User + system CPU of the whole process (every thread), milliseconds. */
  cpuMs: number;
  rssBytes: number;
  at: number;
}

/** CPU and RSS of a process as the kernel counts them (Linux /proc). */
export function sampleProcess(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at state (field 3).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { cpuMs: ((utime + stime) * 1000) / ticksPerSecond(), rssBytes: rssKb * 1024, at: performance.now() };
}

export function canSampleProcesses(): boolean {
  try {
    sampleProcess(process.pid);
    return true;
  } catch {
    return false;
  }
}
