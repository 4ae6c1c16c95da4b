import t from 'tap';
import { migrate } from '../../src/db/migrate.js';
import type { Sql } from '../../src/db/client.js';
import { createTestDatabase, migratedTemplate } from '../helpers/db.js';

/**
 * The suite's databases are copies of one migrated template: a copy must be what running the migrations gives,
 * or every test would run against a schema no deployment has.
 */
async function schemaOf(sql: Sql) {
  const columns = await sql`
    select table_name, column_name, data_type, is_nullable, column_default
    from information_schema.columns where table_schema = 'public'
    order by table_name, column_name`;
  const indexes = await sql`select indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname`;
  const constraints = await sql`
    select conname, pg_get_constraintdef(oid) as def from pg_constraint
    where connamespace = 'public'::regnamespace order by conname`;
  const functions = await sql`
    select p.proname, pg_get_functiondef(p.oid) as def from pg_proc p
    where p.pronamespace = 'public'::regnamespace order by p.proname`;
  const migrations = await sql`select version, name, checksum from schema_migrations order by version`;
  return { columns, indexes, constraints, functions, migrations };
}

t.test('a test database is the schema the migrations build, and its own copy', async (t) => {
  const copied = await createTestDatabase(t);
  const fresh = await createTestDatabase(t, { migrate: false });
  const applied = await migrate(fresh.sql);
  t.ok(applied.length > 0, 'the empty database needed every migration');
  t.same(await migrate(copied.sql), [], 'the copy needs none: it is current');
  t.same(await schemaOf(copied.sql), await schemaOf(fresh.sql), 'same tables, columns, indexes, constraints, rows');

  const other = await createTestDatabase(t);
  await copied.sql`create table only_in_one (id int)`;
  const [row] = await other.sql<{ n: number }[]>`
    select count(*)::int as n from information_schema.tables where table_name = 'only_in_one'`;
  t.equal(row!.n, 0, 'what one test writes, another never sees');
  t.match(await migratedTemplate(), /^parley_template_[0-9a-f]{20}$/);
});
