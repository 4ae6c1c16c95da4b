import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderHaproxyConfig } from './haproxy-config.js';

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
  /** Proxy health-check interval (ms). */
  checkIntervalMs?: number;
  haproxyPath?: string;
  /** Every line an instance or the proxy prints, with its name. */
  onOutput?: (name: string, line: string) => void;
}

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
  readonly instances: ClusterInstance[];
  /** The proxy's view of each instance, per backend: `UP`, `DOWN`, `MAINT`... (from the stats CSV). */
  serverStates(): Promise<Record<string, Record<string, string>>>;
  /** SIGTERM every instance still alive (they drain), then the proxy. Resolves when all exited. */
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
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
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

/** Start one instance and wait for its "parley listening" line (its bound port). */
async function startInstance(index: number, options: ClusterOptions): Promise<ClusterInstance> {
  const routeKey = `n${index + 1}`;
  const name = `parley-${routeKey}`;
  const dataDir = join(options.workDir, name);
  mkdirSync(dataDir, { recursive: true });
  const instanceId = name;
  // A free port picked here (not PORT=0): the instance's ready line is a log line, and LOG_LEVEL may hide it.
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', mainTs], {
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
  });
  let alive = true;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => ((alive = false), resolve(code))));
  let output = '';
  lines(child, (line) => {
    options.onOutput?.(name, line);
    if (output.length < 20_000) output += `${line}\n`;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(async () => {
      if (!alive) throw new Error(`${name} exited before it was ready:\n${output}`);
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
      return res?.status === 200;
    }, 60_000, `${name} to answer /healthz`);
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
  const instances: ClusterInstance[] = [];
  let proxy: ChildProcess | undefined;
  let proxyExited: Promise<unknown> = Promise.resolve();
  const stop = async (how: { signal?: NodeJS.Signals } = {}) => {
    for (const i of instances) i.kill(how.signal ?? 'SIGTERM');
    await Promise.all(instances.map((i) => i.exited));
    proxy?.kill('SIGTERM');
    await proxyExited;
  };
  try {
    // One at a time: they share the migrations (advisory lock) and the machine's CPU at boot.
    for (let i = 0; i < options.instances; i++) instances.push(await startInstance(i, options));
    const proxyPort = options.proxyPort || (await freePort());
    const statsPort = await freePort();
    const config = renderHaproxyConfig({
      bind: `127.0.0.1:${proxyPort}`,
      instances: instances.map((i) => ({ routeKey: i.routeKey, address: `127.0.0.1:${i.port}` })),
      checkIntervalMs: options.checkIntervalMs ?? 1000,
      stats: { bind: `127.0.0.1:${statsPort}`, uri: '/stats' },
    });
    const configPath = join(options.workDir, 'haproxy.cfg');
    writeFileSync(configPath, config);
    const started = spawn(options.haproxyPath ?? '/usr/sbin/haproxy', ['-db', '-f', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    proxy = started;
    proxyExited = new Promise((resolve) => started.once('exit', resolve));
    started.once('error', () => undefined);
    lines(started, (line) => options.onOutput?.('haproxy', line));
    const cluster: Cluster = {
      url: `http://127.0.0.1:${proxyPort}`,
      statsUrl: `http://127.0.0.1:${statsPort}/stats`,
      instances,
      serverStates: () => readServerStates(`http://127.0.0.1:${statsPort}/stats;csv`),
      stop,
    };
    await waitUntil(async () => {
      if (started.exitCode !== null) throw new Error(`haproxy exited (${started.exitCode})`);
      const states = await cluster.serverStates().catch(() => undefined);
      return states !== undefined && instances.every((i) => states.parley?.[i.routeKey] === 'UP' && states.parley_alive?.[i.routeKey] === 'UP');
    }, 30_000, 'the proxy to see every instance up');
    return cluster;
  } catch (err) {
    for (const i of instances) i.kill('SIGKILL');
    await stop();
    throw err;
  }
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

export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
