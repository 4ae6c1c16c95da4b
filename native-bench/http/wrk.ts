/** Running wrk and reading its report. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertLoopback, hasTaskset } from '../harness/children.js';

export const WRK_MISSING =
  'wrk not found: install it with `apt-get install -y wrk` (Debian/Ubuntu; `brew install wrk` on macOS) and run the bench again. Skipping the HTTP scenario.';

export function findWrk(): string | undefined {
  const out = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : undefined;
}

export interface WrkRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface WrkOptions {
  threads: number;
  connections: number;
  seconds: number;
  cpus: number[] | undefined;
}

export interface WrkReport {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx/3xx answers plus socket errors: a route that mostly errors is not measuring what it claims. */
  errors: number;
}

function toMs(value: string, unit: string): number {
  const n = Number(value);
  if (unit === 'us') return n / 1000;
  if (unit === 's') return n * 1000;
  if (unit === 'm') return n * 60_000;
  return n;
}

export function parseWrk(output: string): WrkReport {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
  if (rps === null) throw new Error(`could not read the wrk report:\n${output.slice(0, 800)}`);
  const latency = (p: string): number => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(output);
    return m === null ? Number.NaN : toMs(m[1]!, m[2]!);
  };
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const socketErrors = socket === null ? 0 : socket.slice(1).reduce((n, v) => n + Number(v), 0);
  return {
    requestsPerSecond: Number(rps[1]),
    p50Ms: latency('50'),
    p99Ms: latency('99'),
    requests,
    errors: non2xx + socketErrors,
  };
}

export async function runWrk(wrk: string, request: WrkRequest, options: WrkOptions): Promise<WrkReport> {
  assertLoopback(request.url);
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-wrk-'));
  try {
    const args = [
      '-t',
      String(options.threads),
      '-c',
      String(options.connections),
      '-d',
      `${options.seconds}s`,
      '--latency',
      '--timeout',
      '5s',
    ];
    for (const [name, value] of Object.entries(request.headers ?? {})) args.push('-H', `${name}: ${value}`);
    if (request.method === 'POST') {
      const script = join(dir, 'post.lua');
      writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(request.body ?? '')}\n`);
      args.push('-s', script);
    }
    args.push(request.url);
    const pinned = options.cpus !== undefined && options.cpus.length > 0 && hasTaskset();
    const argv = pinned ? ['taskset', '-c', options.cpus!.join(','), wrk, ...args] : [wrk, ...args];
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0 ? resolve(out) : reject(new Error(`wrk exited ${code}: ${out.slice(0, 500)}`)),
      );
    });
    return parseWrk(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
