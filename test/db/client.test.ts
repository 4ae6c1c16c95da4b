import t from 'tap';
import { checkConnection, createSql, describeDatabaseUrl } from '../../src/db/client.js';
import { createTestDatabase } from '../helpers/db.js';
import { captureLogger } from '../helpers/log.js';

t.test('columns are camelCase both ways; json values are left alone', async (t) => {
  const { sql } = await createTestDatabase(t);
  await sql`create table people (id int primary key, display_name text, settings jsonb)`;
  await sql`insert into people ${sql({ id: 1, displayName: 'Ada', settings: sql.json({ snake_key: 1, camelKey: 2 }) })}`;
  const [row] = await sql<{ id: number; displayName: string; settings: unknown }[]>`select * from people`;
  t.same(row, { id: 1, displayName: 'Ada', settings: { snake_key: 1, camelKey: 2 } });
  await sql`update people set ${sql({ displayName: 'Grace' })} where id = 1`;
  const [updated] = await sql<{ displayName: string }[]>`select display_name from people`;
  t.equal(updated?.displayName, 'Grace');
});

t.test('int8 comes back as a number; numeric stays exact as a string', async (t) => {
  const { sql } = await createTestDatabase(t);
  const [row] = await sql<{ n: number; big: number; micros: number; exact: string }[]>`
    select count(*) as n, 9007199254740991::int8 as big, sum(x)::int8 as micros, 1.10::numeric as exact
    from (values (1500000::int8), (2500000::int8)) as v(x)`;
  t.equal(row?.n, 2);
  t.equal(row?.big, Number.MAX_SAFE_INTEGER);
  t.equal(row?.micros, 4_000_000);
  t.equal(row?.exact, '1.10');
  const [param] = await sql<{ v: number }[]>`select ${1_234_567_890_123}::int8 as v`;
  t.equal(param?.v, 1_234_567_890_123, 'numbers go in as int8 too');
});

t.test('notices go to the debug log, not stdout', async (t) => {
  const { url } = await createTestDatabase(t);
  const logs = captureLogger('debug');
  const sql = createSql(url, { max: 1, log: logs.log });
  t.teardown(() => sql.end());
  await sql`create table if not exists notice_probe (id int)`;
  await sql`create table if not exists notice_probe (id int)`;
  const line = logs.lines.find((l) => l.msg === 'postgres notice');
  t.match(line, { level: 20, notice: { code: '42P07' } });
});

t.test('an unreachable server fails with a clear message and no password', async (t) => {
  const url = 'postgres://parley:hunter2-secret@127.0.0.1:1/parley';
  const sql = createSql(url, { max: 1, connectTimeoutSeconds: 2 });
  t.teardown(() => sql.end());
  const error = await checkConnection(sql, url).then(
    () => null,
    (e: unknown) => e as Error,
  );
  t.match(error?.message, /^Cannot reach PostgreSQL at 127\.0\.0\.1:1\/parley: /);
  t.notMatch(error?.message ?? '', /hunter2/);
  t.same(describeDatabaseUrl(url), { host: '127.0.0.1', port: 1, database: 'parley' });
});
