/**
 * `npm run cluster -- --instances 3 [--port 8080]`: N Parley instances on loopback behind HAProxy, sharing
 * DATABASE_URL (default: the local PostgreSQL, database `parley_cluster`, created when missing) and REDIS_URL (default:
 * the local Redis, prefix `parley-cluster:`). Prints the proxy URL. Ctrl-C drains and stops everything (twice: at once).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { startCluster, type ClusterInstance } from './cluster.js';

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '3' },
    port: { type: 'string', default: '8080' },
    'data-dir': { type: 'string', default: '.data/cluster' },
    quiet: { type: 'boolean', default: false },
  },
});
const count = Number(values.instances);
const port = Number(values.port);
if (!Number.isInteger(count) || count < 1 || count > 32)
  throw new Error('--instances must be a whole number from 1 to 32');
if (!Number.isInteger(port) || port < 0 || port > 65535)
  throw new Error('--port must be a port number (0: any free one)');
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

const passThrough = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name, value]) =>
      value !== undefined &&
      /^(VOICE_|CHAT_|OPENAI_|HOSTED_|BILLING_|METRICS_|LOG_LEVEL|SIGNUP_ENABLED|ADMIN_USER_IDS|PUBLIC_URL|API_RATE|WIDGET_|ACCESS_LOG)/.test(
        name,
      ),
  ),
) as Record<string, string>;

const cluster = await startCluster({
  instances: count,
  proxyPort: port,
  workDir,
  env: {
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    LOG_LEVEL: 'info',
    VOICE_DRAIN_TIMEOUT_SECONDS: '30',
    SIGNUP_ENABLED: 'true',
    ...passThrough,
    DATABASE_URL: await databaseUrl(),
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: process.env.REDIS_KEY_PREFIX ?? 'parley-cluster:',
    SECRET_KEY: secretKey(),
  },
  onOutput: values.quiet ? undefined : (name, line) => process.stdout.write(`${name.padEnd(10)} ${line}\n`),
});

process.stdout.write(
  `\nParley cluster: ${cluster.instances.length} instances behind HAProxy\n` +
    `  proxy  ${cluster.url}   (dashboard ${cluster.url}/dashboard)\n` +
    `  stats  ${cluster.statsUrl}\n` +
    cluster.instances.map((i) => `  ${i.name.padEnd(10)} ${i.url}  pid ${i.pid}  route key ${i.routeKey}\n`).join('') +
    `Rolling restart (each instance replaced in turn, no call cut): kill -HUP ${process.pid}\n` +
    'Ctrl-C drains and stops everything (press it again to stop at once).\n\n',
);

let stopping = false;
const onSignal = () => {
  if (stopping) {
    void cluster.stop({ signal: 'SIGKILL' });
    return;
  }
  stopping = true;
  process.stdout.write('\nstopping: instances drain (VOICE_DRAIN_TIMEOUT_SECONDS), then the proxy\n');
  void cluster.stop().then(() => process.exit(0));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// An instance that dies on its own is reported; the proxy routes around it.
const retiring = new Set<ClusterInstance>();
const watch = (i: ClusterInstance) =>
  void i.exited.then(
    (code) => !stopping && !retiring.has(i) && process.stdout.write(`${i.name} exited (${code ?? 'signal'})\n`),
  );
cluster.instances.forEach(watch);

// SIGHUP: rolling restart. Each instance gets a replacement on a new route key, then drains (up to
// VOICE_DRAIN_TIMEOUT_SECONDS) while the proxy keeps routing its live calls to it.
process.on('SIGHUP', () => {
  if (stopping) return;
  process.stdout.write('\nrolling restart: one instance at a time\n');
  cluster
    .rollingRestart({
      onStep: (step) => {
        if (step.phase === 'replacement-up') {
          watch(step.replacement);
          process.stdout.write(
            `${step.replacement.name} up (${step.replacement.url}, pid ${step.replacement.pid}) to replace ${step.old.name}\n`,
          );
        } else if (step.phase === 'draining') {
          retiring.add(step.old);
          process.stdout.write(`${step.old.name} draining: no new mints; its live calls go on until they end\n`);
        } else {
          process.stdout.write(`${step.old.name} exited (${step.exitCode ?? 'signal'})\n`);
        }
      },
    })
    .then(
      () => process.stdout.write(`rolling restart done: ${cluster.instances.map((i) => i.name).join(', ')}\n`),
      (err: Error) => process.stdout.write(`rolling restart stopped: ${err.message}\n`),
    );
});
