import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import postgres from 'postgres';

/**
 * What a fleet costs its shared services, counted at the source: every command Redis executes (MONITOR on a
 * redis-server of the run's own, so nothing else is counted), grouped by key family; and PostgreSQL's own row and
 * transaction counters for the run's database (pg_stat_database).
 */
export interface RedisWindow {
  /** Commands clients sent (round trips; a script counts once). */
  commands: number;
  /** Commands scripts ran inside Redis (MONITOR shows them with source `lua`), not in `commands`. */
  scriptInner: number;
  /** Commands by family: `voice:owner` (ownership records), `voice:instance` (presence), `publish <channel>`... */
  byFamily: Record<string, number>;
  publishes: number;
  /** The first few commands of each family, as sent (ids and values cut to 40 characters). */
  examples: Record<string, string[]>;
}

export interface PostgresCounters {
  commits: number;
  inserted: number;
  updated: number;
  deleted: number;
}

/** The family of a key: its first two segments after the prefix, ids left out. */
function family(prefix: string, args: string[]): string {
  const command = (args[0] ?? '').toLowerCase();
  if (command === 'publish') return `publish ${(args[1] ?? '').replace(prefix, '')}`;
  let key: string | undefined;
  if (command === 'evalsha' || command === 'eval') key = args[3];
  else key = args.slice(1).find((a) => a.startsWith(prefix));
  if (key === undefined || !key.startsWith(prefix)) return command;
  const parts = key.slice(prefix.length).split(':');
  return parts.slice(0, 2).join(':');
}

/**
 * Count what Redis executes for `ms`: `redis-cli monitor` (ioredis's own monitor mode lost its place in the reply
 * stream under a few thousand lines a second), one line per command, `[db source]` then the quoted arguments.
 */
export async function watchRedis(url: string, prefix: string, ms: number): Promise<RedisWindow> {
  const { hostname, port } = new URL(url);
  const child = spawn('stdbuf', ['-oL', 'redis-cli', '-h', hostname, '-p', port || '6379', 'monitor'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const window: RedisWindow = { commands: 0, scriptInner: 0, byFamily: {}, publishes: 0, examples: {} };
  let rest = '';
  const line = (text: string) => {
    const m = /^\d+\.\d+ \[\d+ (\S+)\] (.*)$/.exec(text);
    if (m === null) return;
    const args = [...m[2]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((a) => a[1]!);
    const name = (args[0] ?? '').toLowerCase();
    if (name === 'monitor' || name === 'info' || name === 'ping' || name === 'client') return;
    if (m[1] === 'lua') {
      window.scriptInner++;
      return;
    }
    window.commands++;
    if (name === 'publish') window.publishes++;
    const f = family(prefix, args);
    window.byFamily[f] = (window.byFamily[f] ?? 0) + 1;
    const seen = (window.examples[f] ??= []);
    if (seen.length < 3) seen.push(args.map((a) => a.slice(0, 40)).join(' '));
  };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    parts.forEach(line);
  });
  await new Promise((resolve) => setTimeout(resolve, ms));
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  return window;
}

export async function postgresCounters(databaseUrl: string): Promise<PostgresCounters> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    // Backends flush their counters at least once a second; ask for a fresh snapshot.
    await sql`select pg_stat_clear_snapshot()`;
    const [row] = await sql<Array<{ commits: string; inserted: string; updated: string; deleted: string }>>`
      select xact_commit as commits, tup_inserted as inserted, tup_updated as updated, tup_deleted as deleted
      from pg_stat_database where datname = current_database()`;
    return {
      commits: Number(row!.commits),
      inserted: Number(row!.inserted),
      updated: Number(row!.updated),
      deleted: Number(row!.deleted),
    };
  } finally {
    await sql.end();
  }
}

export function postgresDelta(a: PostgresCounters, b: PostgresCounters): PostgresCounters {
  return {
    commits: b.commits - a.commits,
    inserted: b.inserted - a.inserted,
    updated: b.updated - a.updated,
    deleted: b.deleted - a.deleted,
  };
}

/** Subscribers of each channel the window published on (delivered messages = publishes x subscribers). */
export async function subscribers(url: string, prefix: string): Promise<number> {
  const client = new Redis(url, { lazyConnect: true });
  await client.connect();
  try {
    const channels = (await client.pubsub('CHANNELS', `${prefix}*`)) as string[];
    if (channels.length === 0) return 0;
    const counts = (await client.pubsub('NUMSUB', ...channels)) as Array<string | number>;
    let max = 0;
    for (let i = 1; i < counts.length; i += 2) max = Math.max(max, Number(counts[i]));
    return max;
  } finally {
    client.disconnect();
  }
}
