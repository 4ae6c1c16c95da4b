import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import postgres from 'postgres';
import { createSql, type Sql } from '../../src/db/client.js';
import { migrate, readMigrationFiles } from '../../src/db/migrate.js';
import { TEST_DATABASE_URL } from './env.js';

/** A fresh database on the test server, dropped at teardown. */
export interface TestDatabase {
  sql: Sql;
  url: string;
  name: string;
}

/**
 * Creates a uniquely named database on the test server (each test file gets its own, so files run in
 * parallel without seeing each other), migrated unless `migrate: false`, and registers teardown:
 * close the client, then DROP DATABASE ... WITH (FORCE) (also ends connections a test forgot).
 *
 * A migrated database is a copy (CREATE DATABASE ... TEMPLATE) of one the migrations built once for the current
 * migration files (see {@link migratedTemplate}): the same schema and `schema_migrations` rows as running them, in a
 * fraction of the time. `migrate: false` gives an empty database, as before.
 */
export async function createTestDatabase(
  t: Test,
  options: { migrate?: boolean; poolSize?: number } = {},
): Promise<TestDatabase> {
  const name = `parley_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  if (options.migrate === false) await adminQuery(`create database "${name}"`);
  else await cloneMigrated(name);
  const url = testDatabaseUrl(name);
  const sql = createSql(url, { max: options.poolSize ?? 4 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await dropTestDatabase(name);
  });
  return { sql, url, name };
}

/** The test server's URL with another database name. */
export function testDatabaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Names of the migrated templates on the test server; the suffix is the hash of what built them. */
export const TEMPLATE_PREFIX = 'parley_template_';
/** A template being built (renamed to its TEMPLATE_PREFIX name once migrated). */
const BUILDING_PREFIX = 'parley_tbuild_';
/** A template nobody's migration files matched for this long is dropped when another is built. */
const STALE_TEMPLATE_MS = 24 * 60 * 60 * 1000;

let template: Promise<string> | undefined;

/**
 * The name of a database the current migrations were applied to, built the first time any test process asks and
 * reused by every later one (all files of a run, and later runs while the migrations stay the same). Its name
 * carries a hash of the migration files and of the migrator, so a changed, added or removed migration builds a
 * new one. Built under a name of its own and renamed when complete, under an advisory lock: a process never
 * copies a half-migrated template, and two processes never build the same one.
 */
export function migratedTemplate(): Promise<string> {
  template ??= buildTemplate().catch((err: unknown) => {
    template = undefined;
    throw err;
  });
  return template;
}

async function cloneMigrated(name: string): Promise<void> {
  const source = await migratedTemplate();
  try {
    await adminQuery(`create database "${name}" template "${source}"`);
  } catch (err) {
    // Dropped as stale by a process with other migrations since we looked: build it again, once.
    if (!(err instanceof Error) || !/does not exist/.test(err.message)) throw err;
    template = undefined;
    await adminQuery(`create database "${name}" template "${await migratedTemplate()}"`);
  }
}

async function templateHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await readMigrationFiles()) hash.update(`${file.version}:${file.name}:${file.checksum}\n`);
  hash.update(readFileSync(fileURLToPath(new URL('../../src/db/migrate.ts', import.meta.url))));
  return hash.digest('hex').slice(0, 20);
}

async function buildTemplate(): Promise<string> {
  const hash = await templateHash();
  const name = `${TEMPLATE_PREFIX}${hash}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => undefined });
  try {
    if (await exists(admin, name)) return name;
    // Session-level lock on the admin connection (max 1: every statement below runs on that one session); a process
    // that dies while building releases it with its connection.
    const [row] = await admin<{ key: number }[]>`select hashtext(${name}) as key`;
    const key = row!.key;
    await admin`select pg_advisory_lock(${key})`;
    try {
      if (await exists(admin, name)) return name;
      // What a process that died while building this one left (nobody else builds it: we hold the lock).
      const orphans = await admin<{ datname: string }[]>`
        select datname from pg_database where starts_with(datname, ${`${BUILDING_PREFIX}${hash}_`})`;
      for (const orphan of orphans) await admin.unsafe(`drop database if exists "${orphan.datname}" with (force)`);

      const building = `${BUILDING_PREFIX}${hash}_${randomBytes(4).toString('hex')}`;
      await admin.unsafe(`create database "${building}"`);
      try {
        const sql = createSql(testDatabaseUrl(building), { max: 1 });
        try {
          await migrate(sql);
        } finally {
          await sql.end({ timeout: 5 });
        }
        await admin.unsafe(`comment on database "${building}" is '${new Date().toISOString()}'`);
        // Nobody connects to a template (not even autovacuum), so copying it never finds it in use.
        await admin.unsafe(`alter database "${building}" allow_connections false`);
        await admin.unsafe(`alter database "${building}" rename to "${name}"`);
      } catch (err) {
        await admin.unsafe(`drop database if exists "${building}" with (force)`);
        throw err;
      }
      await dropStaleTemplates(admin, name);
      return name;
    } finally {
      await admin`select pg_advisory_unlock(${key})`;
    }
  } finally {
    await admin.end();
  }
}

async function exists(admin: postgres.Sql, name: string): Promise<boolean> {
  const rows = await admin`select 1 from pg_database where datname = ${name}`;
  return rows.length > 0;
}

/** Templates of other migration sets built more than a day ago (another branch's may be in use right now). */
async function dropStaleTemplates(admin: postgres.Sql, current: string): Promise<void> {
  const rows = await admin<{ datname: string; built: string | null }[]>`
    select datname, shobj_description(oid, 'pg_database') as built
    from pg_database where starts_with(datname, ${TEMPLATE_PREFIX}) and datname <> ${current}`;
  for (const row of rows) {
    const built = Date.parse(row.built ?? '');
    if (Number.isNaN(built) || Date.now() - built < STALE_TEMPLATE_MS) continue;
    await admin.unsafe(`drop database if exists "${row.datname}" with (force)`).catch(() => undefined);
  }
}

async function adminQuery(statement: string): Promise<void> {
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end();
  }
}

async function dropTestDatabase(name: string): Promise<void> {
  await adminQuery(`drop database if exists "${name}" with (force)`);
}
