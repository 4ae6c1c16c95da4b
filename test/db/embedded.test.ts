import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile, cp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { openDatabase, type Database } from '../../src/db/index.js';
import { migrate, MIGRATIONS_DIR, readMigrationFiles } from '../../src/db/migrate.js';
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { createSql } from '../../src/db/client.js';
import { captureLogger } from '../helpers/log.js';

async function tempDir(t: Test, label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `parley-${label}-`));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

t.test('embedded database: start, migrate, concurrency, restart, close', async (t) => {
  const dataDir = await tempDir(t, 'data');
  const logs = captureLogger();
  const started = performance.now();
  let db: Database = await openDatabase({ dataDir, poolSize: 10, log: logs.log });
  t.teardown(() => db.close());
  const startMs = performance.now() - started;
  // Reported, not asserted: timing belongs to native-bench, never to the test suite.
  t.comment(`first start (initdb + migrations) took ${Math.round(startMs)} ms`);
  t.equal(db.embedded, true);
  t.match(db.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
  t.ok(existsSync(join(dataDir, 'pglite', 'PG_VERSION')), 'data lives under DATA_DIR/pglite');
  const files = await readMigrationFiles();
  t.same(
    db.applied.map((m) => m.version),
    files.map((f) => f.version),
    'migrations ran',
  );
  const { sql } = db;

  await t.test('concurrent read-modify-write transactions stay serial', async (t) => {
    await sql`create table counter (id int primary key, value int not null)`;
    await sql`insert into counter values (1, 0)`;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        sql.begin(async (tx) => {
          const [row] = await tx<{ value: number }[]>`select value from counter where id = 1`;
          await delay(5); // give any other transaction the chance to interleave
          await tx`update counter set value = ${(row?.value ?? 0) + 1} where id = 1`;
        }),
      ),
    );
    const [row] = await sql<{ value: number }[]>`select value from counter`;
    t.equal(row?.value, 10, 'no lost update');
  });

  await t.test('a rollback undoes only its own transaction', async (t) => {
    await sql`create table tx_probe (label text)`;
    const failing = sql.begin(async (tx) => {
      await tx`insert into tx_probe values ('rolled back')`;
      await delay(20);
      throw new Error('boom');
    });
    const committing = sql.begin(async (tx) => {
      await tx`insert into tx_probe values ('committed')`;
    });
    const plain = sql`insert into tx_probe values ('autocommit')`;
    await t.rejects(failing, /boom/);
    await committing;
    await plain;
    const rows = await sql<{ label: string }[]>`select label from tx_probe order by label`;
    t.same(
      rows.map((r) => r.label),
      ['autocommit', 'committed'],
    );
  });

  await t.test('only one process may open the data directory', async (t) => {
    await t.rejects(startEmbeddedPostgres({ dataDir, maxConnections: 2 }), /is in use by process/);
  });

  await t.test('data survives a restart; close frees the port and the lock', async (t) => {
    await sql`insert into idempotency_keys (scope, key) values ('test', 'survives')`;
    const port = portOf(db.url);
    await db.close();
    await db.close(); // idempotent
    t.equal(await canConnect(port), false, 'the port is closed');
    t.equal(existsSync(join(dataDir, 'pglite.lock')), false, 'the lock file is gone');

    const restarted = performance.now();
    db = await openDatabase({ dataDir, poolSize: 10, log: logs.log });
    t.comment(`restart took ${Math.round(performance.now() - restarted)} ms`);
    t.same(db.applied, [], 'nothing to migrate');
    const rows = await db.sql<{ key: string }[]>`select key from idempotency_keys where scope = 'test'`;
    t.same(
      rows.map((r) => r.key),
      ['survives'],
    );
    const [counter] = await db.sql<{ value: number }[]>`select value from counter`;
    t.equal(counter?.value, 10);
  });
});

t.test('fresh embedded: a stale lock is taken over; concurrent migrators apply each migration once', async (t) => {
  const dataDir = await tempDir(t, 'fresh');
  const { hostname } = await import('node:os');
  // A pid above Linux's pid_max (2^22) is never alive.
  await writeFile(join(dataDir, 'pglite.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname() }));
  const server = await startEmbeddedPostgres({ dataDir, maxConnections: EMBEDDED_POOL_SIZE + 1 });
  t.teardown(() => server.close());
  const sql = createSql(server.url, { max: EMBEDDED_POOL_SIZE });
  t.teardown(() => sql.end());

  const dir = await tempDir(t, 'migrations');
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  await writeFile(join(dir, '9000_a.sql'), 'create table embedded_a (id int);');
  await writeFile(join(dir, '9001_b.sql'), 'insert into embedded_a values (1);');
  const [x, y] = await Promise.all([migrate(sql, { dir }), migrate(sql, { dir })]);
  const files = await readMigrationFiles(dir);
  t.same(
    [...x, ...y].map((m) => m.version).sort((a, b) => a - b),
    files.map((f) => f.version),
    'each applied once',
  );
  const [count] = await sql<{ n: number }[]>`select count(*) as n from embedded_a`;
  t.equal(count?.n, 1);

  await sql.end();
  await server.close();
  t.equal(existsSync(join(dataDir, 'pglite.lock')), false, 'lock released');
});
