import { cp, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { createSql } from '../../src/db/client.js';
import {
  COMMENT_ONLY_EDITS,
  migrate,
  MigrationError,
  MIGRATIONS_DIR,
  readMigrationFiles,
} from '../../src/db/migrate.js';
import { createTestDatabase } from '../helpers/db.js';

/** A copy of the real migrations plus `extra` files, removed at teardown. */
async function migrationsDir(t: Test, extra: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'parley-migrations-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, text] of Object.entries(extra)) await writeFile(join(dir, name), text);
  return dir;
}

t.test('a fresh database gets every migration, a second run applies nothing', async (t) => {
  const { sql } = await createTestDatabase(t, { migrate: false });
  const files = await readMigrationFiles();
  t.ok(
    files.some((f) => f.version === 1 && f.name === 'foundation'),
    '0001_foundation ships',
  );

  const first = await migrate(sql);
  t.same(
    first.map((m) => m.version),
    files.map((f) => f.version),
    'all applied, in order',
  );
  const rows = await sql<{ version: number; name: string; checksum: string; appliedAt: Date }[]>`
    select version, name, checksum, applied_at from schema_migrations order by version`;
  t.same(
    rows.map((r) => [r.version, r.name, r.checksum]),
    files.map((f) => [f.version, f.name, f.checksum]),
  );
  t.ok(rows[0]?.appliedAt instanceof Date);

  t.same(await migrate(sql), [], 'second run applies nothing');
});

t.test('0001 foundation: idempotency_keys claims a key once, touch_updated_at works', async (t) => {
  const { sql } = await createTestDatabase(t);
  const claim = () => sql`
    insert into idempotency_keys ${sql({ scope: 'billing:polar', key: 'msg_1', fingerprint: 'abc' })}
    on conflict do nothing returning key`;
  t.equal((await claim()).length, 1, 'first claim inserts');
  t.equal((await claim()).length, 0, 'a retry finds the key taken');
  await sql`update idempotency_keys set response = ${sql.json({ status_code: 200 })} where key = 'msg_1'`;
  const [row] = await sql<
    { response: unknown; expiresAt: Date | null }[]
  >`select response, expires_at from idempotency_keys`;
  t.same(row?.response, { status_code: 200 }, 'jsonb keys are stored and read back unchanged');
  t.equal(row?.expiresAt, null);

  await sql`create table touch_probe (id int primary key, updated_at timestamptz not null default 'epoch')`;
  await sql`create trigger touch_probe_touch before update on touch_probe for each row execute function touch_updated_at()`;
  await sql`insert into touch_probe (id) values (1)`;
  await sql`update touch_probe set id = 1`;
  const [probe] = await sql<{ updatedAt: Date }[]>`select updated_at from touch_probe`;
  t.ok(probe && probe.updatedAt.getTime() > 0, 'updated_at set by the trigger');
});

t.test('a changed or missing applied migration refuses to start', async (t) => {
  const { sql } = await createTestDatabase(t);
  const dir = await migrationsDir(t, { '9000_probe.sql': 'create table probe (id int);\n' });
  t.same(
    (await migrate(sql, { dir })).map((m) => m.name),
    ['probe'],
  );

  await writeFile(join(dir, '9000_probe.sql'), 'create table probe (id int);\r\n');
  t.same(await migrate(sql, { dir }), [], 'CRLF line endings are not a change');

  await writeFile(join(dir, '9000_probe.sql'), 'create table probe (id bigint);\n');
  await writeFile(join(dir, '9001_next.sql'), 'create table next_one (id int);\n');
  await t.rejects(migrate(sql, { dir }), {
    name: 'MigrationError',
    message: /9000_probe changed after it was applied/,
  });
  const [next] = await sql`select to_regclass('next_one') as found`;
  t.equal(next?.found, null, 'nothing later was applied');

  await unlink(join(dir, '9000_probe.sql'));
  await t.rejects(migrate(sql, { dir }), {
    name: 'MigrationError',
    message: /9000_probe is applied .* file is missing/,
  });
});

t.test('a failing migration rolls back alone and is not recorded', async (t) => {
  const { sql } = await createTestDatabase(t);
  const dir = await migrationsDir(t, {
    '9000_good.sql': 'create table good (id int);',
    '9001_bad.sql': 'create table half_done (id int);\nselect 1/0;',
  });
  await t.rejects(migrate(sql, { dir }), /division by zero/);
  const [state] = await sql`select to_regclass('good') as good, to_regclass('half_done') as half`;
  t.equal(state?.good, 'good', 'the earlier migration stays applied');
  t.equal(state?.half, null, 'the failed one left nothing behind');
  const versions = await sql<{ version: number }[]>`select version from schema_migrations where version >= 9000`;
  t.same(
    versions.map((r) => r.version),
    [9000],
  );
});

t.test('badly named files refuse', async (t) => {
  const dir = await migrationsDir(t, { '12_oops.sql': 'select 1;' });
  await t.rejects(readMigrationFiles(dir), MigrationError);
  const dup = await migrationsDir(t, { '0001_again.sql': 'select 1;' });
  await t.rejects(readMigrationFiles(dup), /share version 1/);
});

t.test('two concurrent migrators apply each migration exactly once', async (t) => {
  const { url } = await createTestDatabase(t, { migrate: false });
  const dir = await migrationsDir(t, {
    '9000_slow.sql': 'create table slow (id int);\nselect pg_sleep(0.2);',
    '9001_after.sql': 'create table after_slow (id int);',
    '9002_last.sql': 'insert into after_slow values (1);',
  });
  const a = createSql(url, { max: 2 });
  const b = createSql(url, { max: 2 });
  t.teardown(() => Promise.all([a.end(), b.end()]));

  const [fromA, fromB] = await Promise.all([migrate(a, { dir }), migrate(b, { dir })]);
  const versions = [...fromA, ...fromB].map((m) => m.version).sort((x, y) => x - y);
  const files = await readMigrationFiles(dir);
  t.same(
    versions,
    files.map((f) => f.version),
    'together they applied every file, none twice',
  );
  const [count] = await a<{ n: number }[]>`select count(*) as n from after_slow`;
  t.equal(count?.n, 1, 'the data migration ran once');
  const [rows] = await a<{ n: number }[]>`select count(*) as n from schema_migrations`;
  t.equal(rows?.n, files.length);
});

t.test('the shipped migration files are the ones on disk', async (t) => {
  const files = await readMigrationFiles();
  const text = await readFile(join(MIGRATIONS_DIR, '0001_foundation.sql'), 'utf8');
  t.equal(files[0]?.sql, text.replace(/\r\n/g, '\n'));
});

/** sha256 of each comment-edited file's SQL without its `--` lines, taken before the edit. */
const SQL_BEFORE_COMMENT_EDITS: Record<number, string> = {
  3: 'd6e24d71a5f7dc14959ecec4a30ff989da6b609c8448c22cd373b048485b4fc0',
  4: '0dd3ccf75b8b098e534b44c8e85b71b124c85955305cf22f163ee8614aac4649',
  7: '10d80e80288522da02070c86b76e19afe1b19eed29efbd0ced297ced82d71ce8',
};

t.test(
  'a comment-only edit leaves the SQL as it was, and a database that applied the earlier text is current',
  async (t) => {
    const files = await readMigrationFiles();
    t.same(Object.keys(COMMENT_ONLY_EDITS), Object.keys(SQL_BEFORE_COMMENT_EDITS), 'every edit has its proof');
    for (const [version, before] of Object.entries(SQL_BEFORE_COMMENT_EDITS)) {
      const file = files.find((f) => f.version === Number(version))!;
      const sqlOnly = file.sql
        .split('\n')
        .filter((line) => !/^\s*--/.test(line))
        .join('\n');
      t.equal(createHash('sha256').update(sqlOnly).digest('hex'), before, `${file.name}: only comments changed`);
      t.notOk(
        COMMENT_ONLY_EDITS[file.version]!.includes(file.checksum),
        `${file.name}: the earlier checksum is not the current one`,
      );
    }

    const { sql } = await createTestDatabase(t);
    for (const [version, [earlier]] of Object.entries(COMMENT_ONLY_EDITS))
      await sql`update schema_migrations set checksum = ${earlier!} where version = ${Number(version)}`;
    t.same(await migrate(sql), [], 'applied with the earlier text: current, nothing to apply');
    await sql`update schema_migrations set checksum = ${'0'.repeat(64)} where version = 7`;
    await t.rejects(migrate(sql), {
      name: 'MigrationError',
      message: /0007_usage_rollups changed after it was applied/,
    });
  },
);
