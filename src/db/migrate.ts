import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log/index.js';
import type { Sql, TransactionSql } from './types.js';

/**
 * The folder shipped next to this module: src/db/migrations in development, dist/db/migrations after
 * the build copies the .sql files there.
 */
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** `NNNN_name.sql`: four digits keep `ls` order equal to apply order. */
const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/**
 * Advisory lock key (two int4 halves: "parley" namespace, "migrate"). Advisory locks are scoped to the
 * current database, so test databases on one server never contend.
 */
const LOCK_NAMESPACE = 0x70617272; // 'parr'
const LOCK_ID = 0x6d696772; // 'migr'

/** One migration file on disk. */
export interface MigrationFile {
  version: number;
  name: string;
  /** sha256 (hex) of the file with line endings normalised to LF, so a CRLF checkout is not a "change". */
  checksum: string;
  sql: string;
}

/** A migration this call applied. */
export interface AppliedMigration {
  version: number;
  name: string;
  durationMs: number;
}

/** Options for {@link migrate}. */
export interface MigrateOptions {
  log?: Logger;
  /** Folder holding the NNNN_name.sql files. Default {@link MIGRATIONS_DIR}; tests pass a copy. */
  dir?: string;
}

/** The database and the migration files disagree; the service must not start. */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

/**
 * Checksums some files had before an edit that changed only their comments, whole `--` lines, never SQL (the
 * comments were reworded to cite the repository's own documents): a database that applied the earlier text is
 * current. test/db/migrate.test.ts proves each file's SQL is the same as before, line for line.
 */
export const COMMENT_ONLY_EDITS: Readonly<Record<number, readonly string[]>> = {
  3: ['e625d1613cb4f9ad536a9609a2ded169c98fb624417f10c79806a7bf33223478'],
  4: ['210f9c8de77742b57445d19f5af9052da4a1a01c8465483c0d9af0bd0e09a7e5'],
  7: ['390302150b6498761d1c2421e18d0f5fb135088bb65894269d0700415b6f45e0'],
};

/** Whether the checksum a database recorded is this file's (or the file's before a comment-only edit). */
function isSameMigration(file: MigrationFile, recorded: string): boolean {
  return recorded === file.checksum || (COMMENT_ONLY_EDITS[file.version] ?? []).includes(recorded);
}

/** Reads and validates the migration files, in version order. */
export async function readMigrationFiles(dir: string = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
  const files: MigrationFile[] = [];
  for (const fileName of entries) {
    const match = FILE_PATTERN.exec(fileName);
    if (!match) throw new MigrationError(`Migration file "${fileName}" does not match NNNN_name.sql`);
    const version = Number(match[1]);
    const previous = files.at(-1);
    if (previous?.version === version) {
      throw new MigrationError(`Two migration files share version ${version}: ${previous.name} and ${match[2]}`);
    }
    const text = (await readFile(join(dir, fileName), 'utf8')).replace(/\r\n/g, '\n');
    files.push({
      version,
      name: match[2] ?? '',
      checksum: createHash('sha256').update(text).digest('hex'),
      sql: text,
    });
  }
  return files;
}

/**
 * Applies every pending migration, forward only, each in its own transaction, and returns what this call
 * applied (empty when the database was current).
 *
 * Refuses (MigrationError, nothing applied) when an applied migration's file is missing or its checksum
 * changed: the code and the schema would disagree.
 *
 * Concurrent migrators (instances booting together) are safe: every step takes a transaction-scoped
 * advisory lock and re-reads `schema_migrations` under it, so each migration is applied exactly once and
 * in order, whoever applies it. Transaction-scoped rather than session-scoped so a lock can never outlive
 * its work on a pooled connection. Through the embedded PGlite (one backend session) the advisory lock
 * always succeeds, and the socket server's per-transaction serialisation plus the re-check under the lock
 * give the same guarantee.
 */
export async function migrate(sql: Sql, options: MigrateOptions = {}): Promise<AppliedMigration[]> {
  const { log } = options;
  const files = await readMigrationFiles(options.dir);

  const pending = await sql.begin(async (tx) => {
    await lock(tx);
    await tx.unsafe(`
      create table if not exists schema_migrations (
        version    integer primary key,
        name       text not null,
        checksum   text not null,
        applied_at timestamptz not null default now()
      )`);
    const applied = await readApplied(tx);
    verify(files, applied);
    return files.filter((file) => !applied.has(file.version));
  });

  const done: AppliedMigration[] = [];
  for (const file of pending) {
    const started = performance.now();
    const appliedHere = await sql.begin(async (tx) => {
      await lock(tx);
      // Another instance may have applied it between our check and this lock.
      const [row] = await tx<
        { checksum: string }[]
      >`select checksum from schema_migrations where version = ${file.version}`;
      if (row) {
        if (!isSameMigration(file, row.checksum)) throw checksumError(file);
        return false;
      }
      await tx.unsafe(file.sql);
      await tx`
        insert into schema_migrations (version, name, checksum)
        values (${file.version}, ${file.name}, ${file.checksum})`;
      return true;
    });
    if (!appliedHere) continue;
    const durationMs = Math.round(performance.now() - started);
    done.push({ version: file.version, name: file.name, durationMs });
    log?.info({ migration: { version: file.version, name: file.name }, durationMs }, 'migration applied');
  }
  if (done.length === 0) log?.debug({ migrations: files.length }, 'database schema is current');
  return done;
}

async function lock(tx: TransactionSql): Promise<void> {
  await tx`select pg_advisory_xact_lock(${LOCK_NAMESPACE}::int4, ${LOCK_ID}::int4)`;
}

async function readApplied(tx: TransactionSql): Promise<Map<number, { name: string; checksum: string }>> {
  const rows = await tx<{ version: number; name: string; checksum: string }[]>`
    select version, name, checksum from schema_migrations order by version`;
  return new Map(rows.map((row) => [row.version, { name: row.name, checksum: row.checksum }]));
}

function verify(files: MigrationFile[], applied: Map<number, { name: string; checksum: string }>): void {
  const byVersion = new Map(files.map((file) => [file.version, file]));
  for (const [version, row] of applied) {
    const file = byVersion.get(version);
    if (!file) {
      throw new MigrationError(
        `Migration ${pad(version)}_${row.name} is applied to the database but its file is missing; ` +
          'this code is older than the schema (forward-only: deploy the newer code).',
      );
    }
    if (!isSameMigration(file, row.checksum)) throw checksumError(file);
  }
}

function checksumError(file: MigrationFile): MigrationError {
  return new MigrationError(
    `Migration ${pad(file.version)}_${file.name} changed after it was applied (checksum mismatch); ` +
      'migrations are forward-only: restore the file and add a new migration instead.',
  );
}

function pad(version: number): string {
  return String(version).padStart(4, '0');
}
