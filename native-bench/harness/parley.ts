/**
 * Parley as a server under test: a fresh build of the working tree (built JS, not tsx, for fair numbers), a data
 * directory with a bench user and API key made by the operator CLI, and a child process on the embedded defaults
 * plus Redis (unique key prefix), PORT=0 (the port is read from the "parley listening" log line).
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { buildServer } from '../../scripts/build-server.js';
import { PARLEY_NODE_FLAGS } from '../../scripts/node-flags.js';
import { ROOT, startChild, type Child } from './children.js';

// One cache per checkout: git worktrees may share one node_modules, and a build of another tree must never be
// taken for this one's (its stamp would look fresh).
const CACHE = join(
  ROOT,
  'node_modules',
  '.cache',
  'parley-bench',
  createHash('sha256').update(ROOT).digest('hex').slice(0, 12),
);
const BUILD = join(CACHE, 'dist');
const EMAIL = 'bench@bench.local';
export const BENCH_ORIGIN = 'http://bench.local';

export interface ParleyBuild {
  /** Script to run: built main.js, or src/main.ts through tsx when the build failed. */
  main: string;
  cli: string;
  kind: 'built' | 'tsx';
  note: string;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Build src/ into node_modules/.cache/parley-bench/<checkout>/dist (never touching dist/) with the server build `npm start` uses
 * (scripts/build-server.ts: esbuild, no typecheck), only when a source file is newer than the last build. Only a
 * failed build falls back to tsx, and says so in the run's record.
 */
export async function buildParley(prefer: 'built' | 'tsx', log: (line: string) => void): Promise<ParleyBuild> {
  const tsx: ParleyBuild = {
    main: join(ROOT, 'src/main.ts'),
    cli: join(ROOT, 'src/cli.ts'),
    kind: 'tsx',
    note: 'src/main.ts through tsx',
  };
  if (prefer === 'tsx') return tsx;
  const stamp = join(CACHE, 'build-stamp');
  const main = join(BUILD, 'main.js');
  const fresh =
    existsSync(main) && existsSync(stamp) && Number(readFileSync(stamp, 'utf8')) >= newestMtime(join(ROOT, 'src'));
  if (!fresh) {
    log('building Parley (esbuild, scripts/build-server.ts -> node_modules/.cache/parley-bench/<checkout>/dist)...');
    mkdirSync(CACHE, { recursive: true });
    const started = newestMtime(join(ROOT, 'src'));
    try {
      await buildServer(BUILD);
    } catch (err) {
      log(`the build failed; running src/main.ts through tsx instead\n${String(err).slice(0, 2000)}`);
      return { ...tsx, note: 'src/main.ts through tsx (the build failed)' };
    }
    // The cache sits under node_modules, where Node stops looking for the project's package.json: say ESM here.
    writeFileSync(join(BUILD, 'package.json'), '{"type":"module"}\n');
    writeFileSync(stamp, String(started));
  }
  return {
    main,
    cli: join(BUILD, 'cli.js'),
    kind: 'built',
    note: 'built JS (esbuild of the working tree, node_modules/.cache/parley-bench/<checkout>/dist)',
  };
}

export interface ParleyFixture {
  dataDir: string;
  /** The database created for this run on an external PostgreSQL (dropped by removeFixture), if any. */
  database?: { adminUrl: string; name: string };
  apiKey: string;
  /** METRICS_TOKEN of every Parley child: the bench reads the relay's residence histograms from /metrics. */
  metricsToken: string;
  redisPrefix: string;
  /** Environment every Parley child of this run gets. */
  env: Record<string, string>;
}

function runCli(build: ParleyBuild, env: Record<string, string>, args: string[]): Record<string, unknown> {
  const nodeArgs = build.cli.endsWith('.ts') ? ['--import', 'tsx', build.cli] : [build.cli];
  const out = spawnSync(process.execPath, [...nodeArgs, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  const line = out.stdout.trim().split('\n').pop() ?? '';
  if (out.status !== 0)
    throw new Error(`npm run cli -- ${args[0]} failed (${out.status}): ${line || out.stderr.slice(-500)}`);
  return JSON.parse(line) as Record<string, unknown>;
}

/**
 * The bench user and key, made with the operator CLI. On an external PostgreSQL (`databaseUrl`, the default: a
 * deployment runs on one) a fresh database is created for the run and dropped afterwards. On the embedded default
 * the data directory is made once (about 20 s on PGlite), cached by the hash of the migrations and the CLI, then
 * copied per run so every run starts from the same database.
 */
export async function prepareFixture(
  build: ParleyBuild,
  log: (line: string) => void,
  databaseUrl?: string,
): Promise<ParleyFixture> {
  const baseEnv = { LOG_LEVEL: 'info', NODE_ENV: 'production' };
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  let apiKey: string;
  let database: ParleyFixture['database'];
  const dbEnv: Record<string, string> = {};
  if (databaseUrl !== undefined) {
    const name = `parley_bench_${randomBytes(4).toString('hex')}`;
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
    try {
      await admin.unsafe(`create database "${name}"`);
    } finally {
      await admin.end();
    }
    database = { adminUrl: databaseUrl, name };
    const url = new URL(databaseUrl);
    url.pathname = `/${name}`;
    dbEnv['DATABASE_URL'] = url.toString();
    log(`bench database: ${name} on ${url.host}`);
    const env = { ...baseEnv, ...dbEnv, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    runCli(build, env, [
      'user:create',
      '--email',
      EMAIL,
      '--password',
      `bench-${randomBytes(12).toString('hex')}`,
      '--name',
      'native-bench',
    ]);
    const made = runCli(build, env, [
      'key:create',
      '--email',
      EMAIL,
      '--scopes',
      'chat,assistants:read,assistants:write,voice',
      '--name',
      'native-bench',
    ]);
    apiKey = String(made.secret);
  } else {
    const migrations = join(ROOT, 'src/db/migrations');
    const hash = createHash('sha256');
    for (const name of readdirSync(migrations).sort()) hash.update(name).update(readFileSync(join(migrations, name)));
    hash.update(readFileSync(join(ROOT, 'src/cli.ts')));
    const key = hash.digest('hex').slice(0, 16);
    const cached = join(CACHE, `fixture-${key}`);
    if (!existsSync(join(cached, 'bench.json'))) {
      log('preparing the embedded bench database with the operator CLI (once per schema)...');
      rmSync(cached, { recursive: true, force: true });
      mkdirSync(cached, { recursive: true });
      const env = { ...baseEnv, DATA_DIR: cached, LOG_LEVEL: 'warn' };
      runCli(build, env, [
        'user:create',
        '--email',
        EMAIL,
        '--password',
        `bench-${randomBytes(12).toString('hex')}`,
        '--name',
        'native-bench',
      ]);
      const made = runCli(build, env, [
        'key:create',
        '--email',
        EMAIL,
        '--scopes',
        'chat,assistants:read,assistants:write,voice',
        '--name',
        'native-bench',
      ]);
      writeFileSync(join(cached, 'bench.json'), JSON.stringify({ apiKey: made.secret }));
    }
    cpSync(cached, dataDir, { recursive: true });
    apiKey = (JSON.parse(readFileSync(join(dataDir, 'bench.json'), 'utf8')) as { apiKey: string }).apiKey;
  }
  const redisPrefix = `parley-bench-${randomBytes(4).toString('hex')}:`;
  const metricsToken = randomBytes(16).toString('hex');
  return {
    metricsToken,
    dataDir,
    ...(database ? { database } : {}),
    apiKey,
    redisPrefix,
    env: {
      ...baseEnv,
      ...dbEnv,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: redisPrefix,
      // Raised for the run: the bench measures the limiter's cost, not its refusals.
      API_RATE_LIMIT_PER_MINUTE: '1000000',
      WIDGET_RATE_LIMIT_PER_VISITOR_PER_MINUTE: '1000000',
      WIDGET_RATE_LIMIT_PER_ASSISTANT_PER_MINUTE: '1000000',
      HOSTED_USAGE_ENFORCEMENT: 'off',
      CHAT_PROVIDER: 'local',
      VOICE_PROVIDER: 'simulator',
      METRICS_TOKEN: metricsToken,
    },
  };
}

export async function removeFixture(fixture: ParleyFixture): Promise<void> {
  rmSync(fixture.dataDir, { recursive: true, force: true });
  if (fixture.database) {
    const admin = postgres(fixture.database.adminUrl, { max: 1, onnotice: () => undefined });
    try {
      await admin.unsafe(`drop database if exists "${fixture.database.name}" with (force)`);
    } finally {
      await admin.end();
    }
  }
}

/**
 * Start Parley on the fixture; `simulatorUrl` points voice at a simulator in its own process (its CPU is not
 * Parley's). `extra` adds environment (e.g. VOICE_PROVIDER_APPEND_MS) and node flags (the probe preload).
 */
export async function startParley(
  build: ParleyBuild,
  fixture: ParleyFixture,
  simulatorUrl: string,
  cpus: number[] | undefined,
  extra: { env?: Record<string, string>; nodeArgs?: string[] } = {},
): Promise<Child> {
  // BENCH_PARLEY_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"): extra node flags for the Parley child
  // only, to profile it under the exact bench load. Unset in normal runs.
  // Parley's deployed Node flags first (scripts/node-flags.ts), so a measurement's own flags can override them.
  const nodeArgs = [
    ...PARLEY_NODE_FLAGS,
    ...(extra.nodeArgs ?? []),
    ...(process.env.BENCH_PARLEY_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ];
  return startChild({
    name: 'parley',
    script: build.main,
    nodeArgs,
    env: { ...fixture.env, VOICE_PROVIDER_URL: simulatorUrl, ...extra.env },
    cpus,
    timeoutMs: 60_000,
    ready: (line) => {
      if (!line.includes('parley listening')) return undefined;
      const port = (JSON.parse(line) as { port?: number }).port;
      return port === undefined ? undefined : `http://127.0.0.1:${port}`;
    },
  });
}

export interface BenchAssistant {
  id: string;
  publicId: string;
}

/** Create the bench assistant over the owner API; undefined (with the reason) while that route is not registered. */
export async function createAssistant(baseUrl: string, apiKey: string): Promise<BenchAssistant | string> {
  const res = await fetch(`${baseUrl}/api/v1/assistants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'native-bench',
      instructions: 'Answer briefly.',
      settings: { allowedDomains: [BENCH_ORIGIN], voice: { enabled: true, recording: 'off', requireConsent: false } },
    }),
  });
  const text = await res.text();
  if (res.status === 404)
    return 'POST /api/v1/assistants answered 404 (the assistants routes are not registered in app.ts yet)';
  if (res.status !== 201 && res.status !== 200)
    return `POST /api/v1/assistants answered ${res.status}: ${text.slice(0, 200)}`;
  const { assistant } = JSON.parse(text) as { assistant: { id: string; publicId: string } };
  return { id: assistant.id, publicId: assistant.publicId };
}
