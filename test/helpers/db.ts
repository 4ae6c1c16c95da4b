import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import postgres from 'postgres';
import { createSql, type Sql } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { TEST_DATABASE_URL } from './env.js';

/** A fresh database on the test server, dropped at teardown. */
export interface TestDatabase {
  sql: Sql;
  url: string;
  name: string;
}

/**
 * Creates a uniquely named database on the test server (each test file gets its own, so files run in
 * parallel without seeing each other), runs the migrations unless `migrate: false`, and registers teardown:
 * close the client, then DROP DATABASE ... WITH (FORCE) (also ends connections a test forgot).
 */
export async function createTestDatabase(
  t: Test,
  options: { migrate?: boolean; poolSize?: number } = {},
): Promise<TestDatabase> {
  const name = `parley_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = testDatabaseUrl(name);
  const sql = createSql(url, { max: options.poolSize ?? 4 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await dropTestDatabase(name);
  });
  if (options.migrate !== false) await migrate(sql);
  return { sql, url, name };
}

/** The test server's URL with another database name. */
export function testDatabaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropTestDatabase(name: string): Promise<void> {
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
}
