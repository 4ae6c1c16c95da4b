/**
 * `npm run cluster -- --instances 3 [--port 8080]`: N Parley instances on loopback behind HAProxy, sharing one
 * database, one Redis and one SECRET_KEY. `--help` lists every option. Ctrl-C drains and stops everything (a second
 * press ends the remaining calls now); `kill -HUP <pid>` is a rolling restart.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { startCluster, type ClusterInstance } from './cluster.js';

const USAGE = `Usage: npm run cluster -- [options]

Runs N Parley instances on loopback behind HAProxy (/usr/sbin/haproxy), as deploy/README.md describes.

Options:
  --instances N          instances to run (1-32; default 3)
  --port P               the proxy's port, where callers go (default 8080; 0: any free port)
  --instance-ports LIST  the instances' ports, comma-separated, in order (default: free ports; a replacement
                         started by a rolling restart always takes a free port)
  --drain S              seconds an instance waits for its live calls when it stops or is replaced
                         (VOICE_DRAIN_TIMEOUT_SECONDS; default 30)
  --data-dir DIR         proxy config, SECRET_KEY and the instances' DATA_DIR (default .data/cluster)
  --quiet                do not print the instances' log lines
  -h, --help             this text

Environment: DATABASE_URL (default: database parley_cluster on postgres://postgres@127.0.0.1:5432, created when
missing), REDIS_URL (default redis://127.0.0.1:6379) and REDIS_KEY_PREFIX (default parley-cluster:), SECRET_KEY
(default: one kept under --data-dir). VOICE_*, CHAT_*, OPENAI_*, METRICS_*... pass through to every instance.

Signals: Ctrl-C (SIGINT) or SIGTERM: every instance drains (no new calls; live calls go on up to --drain), then
everything stops. Pressed again: the remaining calls end now (shutdown). SIGHUP: rolling restart.
`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      instances: { type: 'string', default: '3' },
      port: { type: 'string', default: '8080' },
      'instance-ports': { type: 'string' },
      drain: { type: 'string', default: process.env.VOICE_DRAIN_TIMEOUT_SECONDS ?? '30' },
      'data-dir': { type: 'string', default: '.data/cluster' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
} catch (err) {
  fail((err as Error).message);
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const count = Number(values.instances);
const port = Number(values.port);
const drainSeconds = Number(values.drain);
const isPort = (p: number) => Number.isInteger(p) && p >= 0 && p <= 65535;
if (!Number.isInteger(count) || count < 1 || count > 32) fail('--instances must be a whole number from 1 to 32');
if (!isPort(port)) fail('--port must be a port number (0: any free one)');
if (!Number.isInteger(drainSeconds) || drainSeconds < 0) fail('--drain must be a whole number of seconds');
const instancePorts = values['instance-ports'] === undefined ? [] : values['instance-ports'].split(',').map(Number);
if (instancePorts.length > count || !instancePorts.every(isPort))
  fail(`--instance-ports must list up to ${count} port numbers, comma-separated`);
const workDir = resolve(values['data-dir']!);
mkdirSync(workDir, { recursive: true });

/** The database the cluster shares: DATABASE_URL, or `parley_cluster` on the local server (created if missing). */
async function databaseUrl(): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const server = 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = postgres(server, { max: 1, onnotice: () => undefined });
  try {
    const [found] = await admin`select 1 as one from pg_database where datname = 'parley_cluster'`;
    if (found === undefined) await admin.unsafe('create database parley_cluster');
  } finally {
    await admin.end();
  }
  return server.replace(/\/postgres$/, '/parley_cluster');
}

/** One SECRET_KEY for every instance, kept under the data dir so tokens survive a restart of the cluster. */
function secretKey(): string {
  if (process.env.SECRET_KEY) return process.env.SECRET_KEY;
  const path = join(workDir, 'secret-key');
  if (!existsSync(path)) writeFileSync(path, randomBytes(48).toString('base64url'), { mode: 0o600 });
  return readFileSync(path, 'utf8').trim();
}

/** A URL as it may be printed: no password. */
const shown = (url: string) => url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisPrefix = process.env.REDIS_KEY_PREFIX ?? 'parley-cluster:';
const databaseFromEnv = Boolean(process.env.DATABASE_URL);
const database = await databaseUrl().catch((err: Error) =>
  fail(`The cluster's database cannot be reached or created: ${err.message} (set DATABASE_URL)`),
);
process.stdout.write(
  `Parley cluster: ${count} instances\n` +
    `  database  ${shown(database)}${databaseFromEnv ? ' (DATABASE_URL)' : ' (default; set DATABASE_URL to change)'}\n` +
    `  redis     ${shown(redisUrl)} prefix ${redisPrefix}${process.env.REDIS_URL ? ' (REDIS_URL)' : ' (default; set REDIS_URL to change)'}\n` +
    `  drain     ${drainSeconds} s for live calls when an instance stops or is replaced\n`,
);

const passThrough = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name, value]) =>
      value !== undefined &&
      /^(VOICE_|CHAT_|OPENAI_|HOSTED_|BILLING_|METRICS_|LOG_LEVEL|LOG_FORMAT|SELF_HOSTED|SIGNUP_ENABLED|ADMIN_USER_IDS|PUBLIC_URL|API_RATE|WIDGET_|ACCESS_LOG)/.test(
        name,
      ),
  ),
) as Record<string, string>;

const cluster = await startCluster({
  instances: count,
  proxyPort: port,
  instancePorts,
  workDir,
  env: {
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    LOG_LEVEL: 'info',
    // The instances write to a pipe (this command prefixes their lines): pretty when this command is on a terminal.
    LOG_FORMAT: process.stdout.isTTY ? 'pretty' : 'json',
    SIGNUP_ENABLED: 'true',
    ...passThrough,
    VOICE_DRAIN_TIMEOUT_SECONDS: String(drainSeconds),
    DATABASE_URL: database,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: redisPrefix,
    SECRET_KEY: secretKey(),
  },
  onOutput: values.quiet ? undefined : (name, line) => process.stdout.write(`${name.padEnd(10)} ${line}\n`),
});

process.stdout.write(
  `\nParley cluster: ${cluster.instances.length} instances behind HAProxy\n` +
    `  proxy  ${cluster.url}   (dashboard ${cluster.url}/dashboard)\n` +
    `  stats  ${cluster.statsUrl}\n` +
    cluster.instances.map((i) => `  ${i.name.padEnd(10)} ${i.url}  pid ${i.pid}  route key ${i.routeKey}\n`).join('') +
    `Metrics: scrape each instance's /metrics at the URLs above (each sample carries instance_id).\n` +
    `Rolling restart (each instance replaced in turn; calls wait up to ${drainSeconds} s): kill -HUP ${process.pid}\n` +
    'Ctrl-C drains and stops everything (press it again to end the remaining calls now).\n\n',
);

const sql = postgres(database, { max: 1, onnotice: () => undefined });
// The cluster's database is its own: an owner made for `npm start` (the embedded database) is not in it.
const [owners] = await sql<Array<{ any: boolean }>>`select exists (select 1 from users) as any`.catch(() => [
  { any: true },
]);
if (owners?.any === false)
  process.stdout.write(
    `No owner in the cluster's database yet (it is not the one \`npm start\` uses). Create one with:\n` +
      `  DATABASE_URL='${shown(database)}' npm run cli -- user:create --email you@example.com --password-stdin\n\n`,
  );
/** Calls an instance runs or ran, read from the shared database: the cluster's own account of what a stop did. */
async function callsOf(instanceId: string, since: Date) {
  return sql<Array<{ id: string; state: string; endReason: string | null; startedAt: Date | null }>>`
    select id, state, end_reason as "endReason", started_at as "startedAt" from voice_sessions
    where owner_instance = ${instanceId} and (state = 'active' or ended_at >= ${since})
    order by started_at`.catch(() => []);
}
async function reportCut(instance: ClusterInstance, since: Date): Promise<void> {
  const cut = (await callsOf(instance.instanceId, since)).filter((c) => c.endReason === 'shutdown');
  process.stdout.write(
    cut.length === 0
      ? `${instance.name}: no call was cut\n`
      : `${instance.name}: ${cut.length} call(s) cut at the end of the drain (ended shutdown):\n` +
          cut.map((c) => `  ${c.id} (started ${c.startedAt?.toISOString() ?? '?'})\n`).join(''),
  );
}

// Signals. A terminal's Ctrl-C reaches every process of its group (npm, tsx and this one, which tsx also relays it
// to): copies of one press arrive within milliseconds, so signals within a second of the first count as that press.
let presses = 0;
let lastPress = 0;
const stoppedAt = new Date();
const onSignal = (signal: NodeJS.Signals) => {
  const now = Date.now();
  if (presses > 0 && now - lastPress < 1000) return;
  lastPress = now;
  presses++;
  if (presses === 1) {
    stoppedAt.setTime(now);
    process.stdout.write(
      `\n${signal}: stopping. Instances drain (no new calls; live calls go on up to ${drainSeconds} s), then the proxy. ` +
        'Press Ctrl-C again to end the remaining calls now.\n',
    );
    const all = [...cluster.instances];
    void cluster.stop().then(async () => {
      for (const i of all) await reportCut(i, stoppedAt);
      await sql.end();
      process.exit(0);
    });
  } else if (presses === 2) {
    process.stdout.write(`\n${signal} again: the remaining calls end now (shutdown).\n`);
    void cluster.stop({ signal: 'SIGTERM' });
  } else {
    process.stdout.write(`\n${signal} a third time: killing every process.\n`);
    void cluster.stop({ signal: 'SIGKILL' }).then(() => process.exit(1));
  }
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// An instance that dies on its own is reported; the proxy routes around it.
const retiring = new Set<ClusterInstance>();
const watch = (i: ClusterInstance) =>
  void i.exited.then(
    (code) => presses === 0 && !retiring.has(i) && process.stdout.write(`${i.name} exited (${code ?? 'signal'})\n`),
  );
cluster.instances.forEach(watch);

// SIGHUP: rolling restart. Each instance gets a replacement on a new route key, then drains (up to --drain) while
// the proxy keeps routing its live calls to it; the calls still running at the end of the drain are named.
process.on('SIGHUP', () => {
  if (presses > 0) return;
  process.stdout.write(`\nrolling restart: one instance at a time; each waits up to ${drainSeconds} s for its calls\n`);
  const drainingSince = new Map<ClusterInstance, Date>();
  cluster
    .rollingRestart({
      onStep: async (step) => {
        if (step.phase === 'replacement-up') {
          watch(step.replacement);
          process.stdout.write(
            `${step.replacement.name} up (${step.replacement.url}, pid ${step.replacement.pid}) to replace ${step.old.name}\n`,
          );
        } else if (step.phase === 'draining') {
          retiring.add(step.old);
          drainingSince.set(step.old, new Date());
          const live = (await callsOf(step.old.instanceId, new Date())).filter((c) => c.state === 'active');
          process.stdout.write(
            `${step.old.name} draining: no new calls; ${live.length} live call(s) go on until they end or ${drainSeconds} s pass\n`,
          );
        } else {
          process.stdout.write(`${step.old.name} exited (${step.exitCode ?? 'signal'})\n`);
          await reportCut(step.old, drainingSince.get(step.old) ?? new Date(0));
        }
      },
    })
    .then(
      () => process.stdout.write(`rolling restart done: ${cluster.instances.map((i) => i.name).join(', ')}\n`),
      (err: Error) => process.stdout.write(`rolling restart stopped: ${err.message}\n`),
    );
});
