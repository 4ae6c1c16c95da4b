import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderHaproxyConfig } from './haproxy-config.js';
import { PARLEY_NODE_FLAGS } from '../node-flags.js';

/**
 * A local Parley cluster: N instances as real processes on loopback ports (each `src/main.ts` under tsx, its own
 * INSTANCE_ID, INSTANCE_ROUTE_KEY and DATA_DIR, one shared database, Redis and SECRET_KEY) behind one HAProxy.
 * Used by `npm run cluster` and by test/cluster/.
 */
export interface ClusterOptions {
  instances: number;
  /** Environment every instance shares (DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX, SECRET_KEY, knobs...). */
  env: Record<string, string>;
  /** Where the proxy config and the instances' data directories go. */
  workDir: string;
  /** Proxy port (0: a free one). */
  proxyPort?: number;
  /** Ports of the first instances, in order (0 or missing: a free one); replacements always take a free one. */
  instancePorts?: number[];
  /** Proxy health-check interval (ms). */
  checkIntervalMs?: number;
  haproxyPath?: string;
  /** Every line an instance or the proxy prints, with its name. */
  onOutput?: (name: string, line: string) => void;
  /** Route-key slots the proxy knows (`n1..nK`; default twice the instances), so replacements get keys of their own. */
  slots?: number;
  /** Node's arguments that start an instance after Parley's Node flags (default: src/main.ts through tsx). */
  command?: string[];
}

/** What a rolling restart is doing, for a person watching (`npm run cluster`) or a test. */
export type RollingStep =
  | { phase: 'replacement-up'; old: ClusterInstance; replacement: ClusterInstance }
  | { phase: 'draining'; old: ClusterInstance; replacement: ClusterInstance }
  | { phase: 'retired'; old: ClusterInstance; exitCode: number | null };

export interface ClusterInstance {
  readonly name: string;
  readonly routeKey: string;
  readonly instanceId: string;
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  readonly alive: boolean;
  kill(signal: NodeJS.Signals): void;
}

export interface Cluster {
  /** The proxy: where callers go. */
  readonly url: string;
  readonly statsUrl: string;
  /** HAProxy's runtime API socket (admin level): see {@link admin}. */
  readonly adminSocket: string;
  readonly instances: ClusterInstance[];
  /** The proxy's view of each instance, per backend: `UP`, `DOWN`, `MAINT`... (from the stats CSV). */
  serverStates(): Promise<Record<string, Record<string, string>>>;
  /**
   * Replace every instance, one at a time, without cutting a call: start the replacement on a free route key and put
   * it in the proxy (runtime API, no reload), take the old one out of the mint backend, SIGTERM it and wait while it
   * drains (the proxy keeps routing its live sessions to it by their key), then free its slot. `instances` is updated
   * as it goes; each step waits for `onStep` to resolve. Rejects when one is already running or a replacement does not come up (the old instance keeps serving).
   */
  rollingRestart(options?: {
    onStep?: (step: RollingStep) => void | Promise<void>;
  }): Promise<Array<{ old: string; replacement: string; exitCode: number | null }>>;
  /**
   * SIGTERM every instance still alive (they drain), then the proxy. Resolves when all exited. Called again while the
   * first is under way, it sends the signal again: a second SIGTERM makes an instance end its calls now (`shutdown`).
   */
  stop(options?: { signal?: NodeJS.Signals }): Promise<void>;
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const mainTs = join(repoRoot, 'src', 'main.ts');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

function lines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const part of parts) onLine(part);
    });
  }
}

/** Start one instance and wait until it answers /healthz. */
async function startInstance(routeKey: string, options: ClusterOptions, chosenPort = 0): Promise<ClusterInstance> {
  const name = `parley-${routeKey}`;
  const dataDir = join(options.workDir, name);
  mkdirSync(dataDir, { recursive: true });
  const instanceId = name;
  // A free port picked here (not PORT=0): the instance's ready line is a log line, and LOG_LEVEL may hide it.
  const port = chosenPort || (await freePort());
  const child = spawn(process.execPath, [...PARLEY_NODE_FLAGS, ...(options.command ?? ['--import', 'tsx', mainTs])], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...options.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      INSTANCE_ID: instanceId,
      INSTANCE_ROUTE_KEY: routeKey,
      DATA_DIR: dataDir,
      TRUST_PROXY: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own: a terminal's Ctrl-C reaches the cluster command only, which decides what each
    // instance is told (drain first, cut on a second press), instead of every instance taking it as a second signal.
    detached: true,
  });
  let alive = true;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => ((alive = false), resolve(code))),
  );
  let output = '';
  lines(child, (line) => {
    options.onOutput?.(name, line);
    if (output.length < 20_000) output += `${line}\n`;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      async () => {
        if (!alive) throw new Error(`${name} exited before it was ready:\n${output}`);
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
        return res?.status === 200;
      },
      60_000,
      `${name} to answer /healthz`,
    );
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  }
  return {
    name,
    routeKey,
    instanceId,
    port,
    url,
    pid: child.pid!,
    exited,
    get alive() {
      return alive;
    },
    kill: (signal) => {
      if (alive) child.kill(signal);
    },
  };
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  mkdirSync(options.workDir, { recursive: true });
  const slots = options.slots ?? options.instances * 2;
  if (!Number.isInteger(slots) || slots < options.instances)
    throw new Error('slots must be at least the number of instances');
  const keys = Array.from({ length: slots }, (_, i) => `n${i + 1}`);
  /** The instances in service (what callers reach), in order. */
  const instances: ClusterInstance[] = [];
  /** Every process started, draining ones included: stop() waits for all of them. */
  const processes: ClusterInstance[] = [];
  /**
   * Free keys, the longest free first: a replacement never takes the key an instance just gave up, so requests about
   * that instance's ended sessions (a late end or heartbeat) are not taken for a live owner's (any instance answers them).
   */
  const free = keys.slice(options.instances);
  let proxy: ChildProcess | undefined;
  let proxyExited: Promise<unknown> = Promise.resolve();
  const adminSocket = join(options.workDir, 'haproxy.sock');
  // Own process groups do not die with this process: never leave them behind.
  const orphans = () => {
    for (const i of processes) i.kill('SIGKILL');
    proxy?.kill('SIGKILL');
  };
  process.once('exit', orphans);
  const stop = async (how: { signal?: NodeJS.Signals } = {}) => {
    for (const i of processes) i.kill(how.signal ?? 'SIGTERM');
    await Promise.all(processes.map((i) => i.exited));
    proxy?.kill('SIGTERM');
    await proxyExited;
    process.off('exit', orphans);
  };
  const launch = async (routeKey: string, port = 0) => {
    const instance = await startInstance(routeKey, options, port);
    processes.push(instance);
    return instance;
  };
  try {
    // One at a time: they share the migrations (advisory lock) and the machine's CPU at boot.
    for (let i = 0; i < options.instances; i++) instances.push(await launch(keys[i]!, options.instancePorts?.[i]));
    const proxyPort = options.proxyPort || (await freePort());
    const statsPort = await freePort();
    const byKey = new Map(instances.map((i) => [i.routeKey, i]));
    const config = renderHaproxyConfig({
      bind: `127.0.0.1:${proxyPort}`,
      // Free slots point nowhere and stay in maintenance until a replacement takes one.
      instances: keys.map((key) =>
        byKey.has(key)
          ? { routeKey: key, address: `127.0.0.1:${byKey.get(key)!.port}` }
          : { routeKey: key, address: '127.0.0.1:9', spare: true },
      ),
      checkIntervalMs: options.checkIntervalMs ?? 1000,
      stats: { bind: `127.0.0.1:${statsPort}`, uri: '/stats' },
      adminSocket,
    });
    const configPath = join(options.workDir, 'haproxy.cfg');
    writeFileSync(configPath, config);
    const started = spawn(options.haproxyPath ?? '/usr/sbin/haproxy', ['-db', '-f', configPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    proxy = started;
    proxyExited = new Promise((resolve) => started.once('exit', resolve));
    started.once('error', () => undefined);
    lines(started, (line) => options.onOutput?.('haproxy', line));
    const serverStates = () => readServerStates(`http://127.0.0.1:${statsPort}/stats;csv`);
    const inService = async (key: string) => {
      const states = await serverStates().catch(() => undefined);
      return states?.parley?.[key] === 'UP' && states.parley_alive?.[key] === 'UP';
    };
    let restarting = false;
    const rollingRestart: Cluster['rollingRestart'] = async ({ onStep } = {}) => {
      if (restarting) throw new Error('a rolling restart is already running');
      restarting = true;
      const report: Array<{ old: string; replacement: string; exitCode: number | null }> = [];
      try {
        for (const old of [...instances]) {
          if (!old.alive) continue;
          const key = free.shift();
          if (key === undefined) throw new Error(`no free route-key slot (${slots} slots)`);
          // 1. The replacement, on a key of its own: the old owner's sessions keep routing to the old key meanwhile.
          const replacement = await launch(key).catch((err) => {
            free.unshift(key);
            throw err;
          });
          await admin(adminSocket, [
            `set server parley/${key} addr 127.0.0.1 port ${replacement.port}`,
            `set server parley_alive/${key} addr 127.0.0.1 port ${replacement.port}`,
            `set server parley/${key} state ready`,
            `set server parley_alive/${key} state ready`,
          ]);
          await waitUntil(() => inService(key), 30_000, `the proxy to see ${replacement.name} up`).catch(
            async (err) => {
              replacement.kill('SIGKILL');
              void replacement.exited.then(() => free.push(key));
              await admin(adminSocket, [
                `set server parley/${key} state maint`,
                `set server parley_alive/${key} state maint`,
              ]).catch(() => undefined);
              throw err;
            },
          );
          instances.splice(instances.indexOf(old), 1, replacement);
          await onStep?.({ phase: 'replacement-up', old, replacement });
          // 2. No new mints for the old one (before its readiness even fails), then SIGTERM: it drains while the
          //    proxy keeps sending its sessions' heartbeats, gates and media to it (DRAIN: persistent traffic only).
          await admin(adminSocket, [
            `set server parley/${old.routeKey} state drain`,
            `set server parley_alive/${old.routeKey} state maint`,
          ]);
          old.kill('SIGTERM');
          await onStep?.({ phase: 'draining', old, replacement });
          const exitCode = await old.exited;
          // 3. Gone: its slot is free for a later replacement.
          await admin(adminSocket, [`set server parley/${old.routeKey} state maint`]);
          free.push(old.routeKey);
          processes.splice(processes.indexOf(old), 1);
          await onStep?.({ phase: 'retired', old, exitCode });
          report.push({ old: old.name, replacement: replacement.name, exitCode });
        }
        return report;
      } finally {
        restarting = false;
      }
    };
    const cluster: Cluster = {
      url: `http://127.0.0.1:${proxyPort}`,
      statsUrl: `http://127.0.0.1:${statsPort}/stats`,
      adminSocket,
      instances,
      serverStates,
      rollingRestart,
      stop,
    };
    await waitUntil(
      async () => {
        if (started.exitCode !== null) throw new Error(`haproxy exited (${started.exitCode})`);
        const states = await cluster.serverStates().catch(() => undefined);
        return (
          states !== undefined &&
          instances.every((i) => states.parley?.[i.routeKey] === 'UP' && states.parley_alive?.[i.routeKey] === 'UP')
        );
      },
      30_000,
      'the proxy to see every instance up',
    );
    return cluster;
  } catch (err) {
    for (const i of processes) i.kill('SIGKILL');
    await stop();
    throw err;
  }
}

/** Commands on HAProxy's runtime API (one connection, `;`-separated); rejects when one answers anything but empty. */
export async function admin(socketPath: string, commands: string[]): Promise<void> {
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(socketPath);
    let text = '';
    socket.setEncoding('utf8');
    socket.setTimeout(5000, () => socket.destroy(new Error('haproxy runtime API did not answer')));
    socket.on('data', (chunk: string) => (text += chunk));
    socket.once('error', reject);
    socket.once('close', () => resolve(text));
    socket.end(`${commands.join('; ')}\n`);
  });
  const problems = answer
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^IP changed from|port changed from|no need to change/i.test(l));
  if (problems.length > 0) throw new Error(`haproxy refused "${commands.join('; ')}": ${problems.join(' | ')}`);
}

async function readServerStates(csvUrl: string): Promise<Record<string, Record<string, string>>> {
  const res = await fetch(csvUrl, { signal: AbortSignal.timeout(2000) });
  const text = await res.text();
  const [header, ...rows] = text.replace(/^# /, '').trim().split('\n');
  const columns = header!.split(',');
  const at = (name: string) => columns.indexOf(name);
  const states: Record<string, Record<string, string>> = {};
  for (const row of rows) {
    const cells = row.split(',');
    const backend = cells[at('pxname')]!;
    const server = cells[at('svname')]!;
    if (server === 'FRONTEND' || server === 'BACKEND') continue;
    (states[backend] ??= {})[server] = (cells[at('status')] ?? '').split(' ')[0]!;
  }
  return states;
}

export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
