/**
 * native-bench overload mode (`npm run bench -- --only=overload`): one tenant floods POST /api/v1/chat at rising
 * concurrency (10, 50, 200 callers) while the CPU is saturated by burner processes this bench starts (one per core)
 * and another tenant reads GET /api/v1/assistants every 50 ms, from a process of its own. Reported per level: answered chats per second, 503
 * refusals, anything else (a 500 is a failure), and the other tenant's read latency (p50, p99).
 * Targets: throughput at 200 callers >= 80% of the best level's; the reader's p99 <= 250 ms; no 500.
 *
 * The figures only mean something on a machine nobody else is loading: before it starts, the bench measures the
 * load average, and refuses to report (exit 2) when other work already uses more than half of the cores
 * (`--force` runs anyway, and says so next to every figure).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const LEVELS = [10, 50, 200];

export interface OverloadLevel {
  callers: number;
  windowS: number;
  answeredPerS: number;
  refused503: number;
  other: Record<string, number>;
  readerP50Ms: number;
  readerP99Ms: number;
  readerFailures: number;
}

export interface OverloadResult {
  refused?: string;
  forced: boolean;
  load1: number;
  cores: number;
  levels: OverloadLevel[];
  targets: Array<{ name: string; value: number; limit: number; ok: boolean }>;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export async function runOverloadScenario(options: {
  log: (line: string) => void;
  windowS: number;
  force: boolean;
  databaseUrl: string;
}): Promise<OverloadResult> {
  const { log } = options;
  const cores = cpus().length;
  const load1 = loadavg()[0]!;
  const result: OverloadResult = { forced: options.force, load1, cores, levels: [], targets: [] };
  if (load1 > cores * 0.5 && !options.force) {
    result.refused = `the machine is already loaded (1-minute load ${load1.toFixed(2)} on ${cores} cores): other work would be measured, not Parley; run it on an idle machine or pass --force`;
    return result;
  }

  const dbName = `parley_overload_${Date.now().toString(36)}`;
  const admin = postgres(options.databaseUrl, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database "${dbName}"`);
  const url = new URL(options.databaseUrl);
  url.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-overload-'));
  const burners: ChildProcess[] = [];
  let server: ChildProcess | undefined;
  const stdoutPath = join(dataDir, 'server.log');
  const stdoutFd = openSync(stdoutPath, 'w');
  try {
    // BENCH_PARLEY_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"): profile the server as in the other scenarios.
    const nodeArgs = (process.env.BENCH_PARLEY_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    server = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_URL: url.toString(),
        DATA_DIR: dataDir,
        PORT: '0',
        LOG_LEVEL: 'info',
        ACCESS_LOG_SAMPLE_RATE: '0',
        SIGNUP_ENABLED: 'true',
        HOSTED_USAGE_ENFORCEMENT: 'off',
        API_RATE_LIMIT_PER_MINUTE: '1000000',
        // ADMISSION_* and DATABASE_POOL_SIZE from the bench's environment: compare admission settings run by run.
        ...Object.fromEntries(
          Object.entries(process.env).filter(([k]) => k.startsWith('ADMISSION_') || k === 'DATABASE_POOL_SIZE'),
        ),
      },
      // stdout to a file, not a pipe: on Linux a pipe makes every log line a synchronous write that waits for this
      // busy process to read it (a CPU profile of the server showed 38% of its time there).
      stdio: ['ignore', stdoutFd, 'inherit'],
    });
    closeSync(stdoutFd);
    const base = await listening(server, stdoutPath);
    log(`overload: Parley on ${base}`);
    const flooder = await tenant(base, 'flooder@example.com');
    const reader = await tenant(base, 'reader@example.com');

    for (let i = 0; i < cores; i++) burners.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
    log(`overload: ${cores} CPU burners started`);

    for (const callers of LEVELS) {
      const level = await measure(base, flooder, reader, callers, options.windowS);
      log(
        `overload: ${callers} callers: ${level.answeredPerS.toFixed(1)} chats/s, ${level.refused503} x 503, other ${JSON.stringify(level.other)}, reader p99 ${level.readerP99Ms.toFixed(0)} ms`,
      );
      result.levels.push(level);
    }
  } finally {
    for (const b of burners) b.kill('SIGKILL');
    server?.kill('SIGTERM');
    if (server) await new Promise((r) => server!.once('exit', r));
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch(() => undefined);
    await admin.end();
    // BENCH_KEEP_OUTPUT=DIR keeps the server's log (as for the other scenarios).
    const keep = process.env.BENCH_KEEP_OUTPUT;
    if (keep !== undefined && keep !== '') {
      mkdirSync(keep, { recursive: true });
      cpSync(stdoutPath, join(keep, `overload-parley.log`));
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  const best = Math.max(...result.levels.map((l) => l.answeredPerS));
  const at200 = result.levels.find((l) => l.callers === 200)!;
  const fivehundreds = result.levels.reduce(
    (n, l) => n + Object.entries(l.other).reduce((m, [s, c]) => m + (Number(s) >= 500 ? c : 0), 0),
    0,
  );
  result.targets = [
    {
      name: 'throughput at 200 callers / best',
      value: at200.answeredPerS / best,
      limit: 0.8,
      ok: at200.answeredPerS / best >= 0.8,
    },
    {
      name: "other tenant's reads p99 (ms, worst level)",
      value: Math.max(...result.levels.map((l) => l.readerP99Ms)),
      limit: 250,
      ok: Math.max(...result.levels.map((l) => l.readerP99Ms)) <= 250,
    },
    { name: '5xx other than 503', value: fivehundreds, limit: 0, ok: fivehundreds === 0 },
  ];
  return result;
}

function listening(server: ChildProcess, stdoutPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error('Parley did not start within 60 s')), 60_000);
    const poll = setInterval(() => {
      const line = readFileSync(stdoutPath, 'utf8')
        .split('\n')
        .find((l) => l.includes('"parley listening"'));
      if (line !== undefined) finish(undefined, `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`);
    }, 50);
    const onExit = (code: number | null) => finish(new Error(`Parley exited ${code}`));
    server.once('exit', onExit);
    function finish(error: Error | undefined, base?: string): void {
      clearTimeout(timer);
      clearInterval(poll);
      server.off('exit', onExit);
      if (error) reject(error);
      else resolve(base!);
    }
  });
}

interface Tenant {
  key: string;
  assistantId: string;
}

async function tenant(base: string, email: string): Promise<Tenant> {
  const signup = await fetch(`${base}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery staple' }),
  });
  const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0]!;
  const headers = { 'content-type': 'application/json', cookie, origin: base };
  const created = await fetch(`${base}/api/v1/assistants`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Bench', instructions: 'Answer from the documents.' }),
  });
  const { assistant } = (await created.json()) as { assistant: { publicId: string } };
  const key = await fetch(`${base}/api/account/keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'bench', scopes: ['chat', 'assistants:read'] }),
  });
  const { secret } = (await key.json()) as { secret: string };
  return { key: secret, assistantId: assistant.publicId };
}

async function measure(
  base: string,
  flooder: Tenant,
  reader: Tenant,
  callers: number,
  windowS: number,
): Promise<OverloadLevel> {
  const until = Date.now() + windowS * 1000;
  let answered = 0;
  let refused = 0;
  const other: Record<string, number> = {};
  const caller = async () => {
    while (Date.now() < until) {
      let status: string;
      let retryAfterMs = 0;
      try {
        const res = await fetch(`${base}/api/v1/chat`, {
          method: 'POST',
          headers: { authorization: `Bearer ${flooder.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ assistantId: flooder.assistantId, message: 'What are your opening hours?' }),
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        status = String(res.status);
        retryAfterMs = Number(res.headers.get('retry-after') ?? 0) * 1000;
      } catch {
        status = 'network';
      }
      if (status === '200') answered++;
      else if (status === '503') {
        refused++;
        // A well-behaved client honours Retry-After (capped so the level stays a flood).
        await new Promise((r) => setTimeout(r, Math.min(retryAfterMs, 250)));
      } else other[status] = (other[status] ?? 0) + 1;
    }
  };
  const started = Date.now();
  const [, read] = await Promise.all([
    Promise.all(Array.from({ length: callers }, caller)),
    readInOwnProcess(base, reader.key, until),
  ]);
  const elapsedS = (Date.now() - started) / 1000;
  const latencies = read.latencies.sort((a, b) => a - b);
  const readerFailures = read.failures;
  return {
    callers,
    windowS: elapsedS,
    answeredPerS: answered / elapsedS,
    refused503: refused,
    other,
    readerP50Ms: percentile(latencies, 50),
    readerP99Ms: percentile(latencies, 99),
    readerFailures,
  };
}

/**
 * The other tenant's reads, from a process of their own: in the flooding process the 200 callers' own event loop
 * would delay the reader's timers and answers, and the figure would measure the load generator, not Parley.
 */
const READER = `
const [base, key, until] = process.argv.slice(1);
const latencies = [];
let failures = 0;
while (Date.now() < Number(until)) {
  const started = performance.now();
  try {
    const res = await fetch(base + '/api/v1/assistants', { headers: { authorization: 'Bearer ' + key }, signal: AbortSignal.timeout(30000) });
    await res.arrayBuffer();
    if (res.status !== 200) failures++;
  } catch {
    failures++;
  }
  latencies.push(performance.now() - started);
  await new Promise((r) => setTimeout(r, 50));
}
process.stdout.write(JSON.stringify({ latencies, failures }));
`;

function readInOwnProcess(
  base: string,
  key: string,
  until: number,
): Promise<{ latencies: number[]; failures: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', READER, base, key, String(until)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        resolve(JSON.parse(out) as { latencies: number[]; failures: number });
      } catch {
        reject(new Error(`the reader process exited ${code} without figures`));
      }
    });
  });
}
