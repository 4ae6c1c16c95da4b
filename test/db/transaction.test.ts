import t from 'tap';
import postgres from 'postgres';
import { createSql, type Sql } from '../../src/db/client.js';
import { createTestDatabase } from '../helpers/db.js';

/** How many queries postgres.js pipelines on one connection before it counts it full (its default). */
const PIPELINE = 100;

/**
 * Fills both connections of a 2-connection pool to one short of their pipelines (a slow query each, then 99 quick
 * ones), then starts two transactions: postgres.js 3.4.x writes each BEGIN as the query that fills a pipeline.
 */
async function fullPipelines<T>(
  sql: { (strings: TemplateStringsArray): PromiseLike<unknown> & { execute(): unknown } },
  begin: () => Promise<T>,
): Promise<PromiseSettledResult<unknown>[]> {
  await Promise.all([sql`select pg_sleep(0.01)`, sql`select pg_sleep(0.01)`]);
  const queued = [sql`select pg_sleep(0.3)`, sql`select pg_sleep(0.3)`];
  for (let i = 0; i < 2 * (PIPELINE - 1); i++) queued.push(sql`select 1`);
  for (const query of queued) query.execute(); // in this order, before the BEGINs
  const transactions = [begin(), begin()];
  return Promise.allSettled([...queued, ...transactions]);
}

async function idleInTransaction(sql: Sql, application: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*) as n from pg_stat_activity
    where state like 'idle in transaction%' and application_name = ${application} and datname = current_database()`;
  return row?.n ?? 0;
}

t.test('a transaction started behind a full pipeline commits, and no connection is left in it', async (t) => {
  const { sql: admin, url } = await createTestDatabase(t, { migrate: false });
  await admin`create table marks (n int)`;

  // The scenario does reach the driver's fault: plain postgres.js answers UNSAFE_TRANSACTION and leaves the
  // connection open in a transaction nobody owns.
  const plain = postgres(url, { max: 2, connection: { application_name: 'plain' }, onnotice: () => {} });
  t.teardown(() => plain.end({ timeout: 1 }));
  const plainResults = await fullPipelines(plain as never, () => plain.begin((tx) => tx`insert into marks values (0)`));
  const plainErrors = plainResults.flatMap((r) =>
    r.status === 'rejected' ? [(r.reason as { code?: string }).code] : [],
  );
  t.ok(plainErrors.includes('UNSAFE_TRANSACTION'), 'plain postgres.js fails in this scenario');

  const sql = createSql(url, { max: 2, queryTimeoutMs: 5000 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const results = await fullPipelines(sql as never, () =>
    sql.begin(async (tx) => {
      await tx`insert into marks values (1)`;
      return 'committed';
    }),
  );
  t.same(
    results.filter((r) => r.status === 'rejected'),
    [],
    'every query and both transactions succeed',
  );
  t.same(
    results.slice(-2).map((r) => (r.status === 'fulfilled' ? r.value : undefined)),
    ['committed', 'committed'],
  );
  const [row] = await admin<{ n: number }[]>`select count(*) as n from marks where n = 1`;
  t.equal(row?.n, 2, 'both transactions wrote their row');
  t.equal(await idleInTransaction(admin, 'parley'), 0, 'no connection of the pool is left inside a transaction');
});

t.test('a failing transaction rolls back and gives its connection back', async (t) => {
  const { url, sql: admin } = await createTestDatabase(t, { migrate: false });
  await admin`create table marks (n int)`;
  const sql = createSql(url, { max: 1, queryTimeoutMs: 5000 });
  t.teardown(() => sql.end({ timeout: 1 }));
  await t.rejects(
    sql.begin(async (tx) => {
      await tx`insert into marks values (1)`;
      throw new Error('the work failed');
    }),
    { message: 'the work failed' },
  );
  await t.rejects(
    sql.begin((tx) => tx`select nope`),
    { code: '42703' },
  );
  t.same(await sql`select count(*)::int as n from marks`, [{ n: 0 }], 'rolled back; the one connection is free');
  t.same(await sql.begin('read write', (tx) => tx`select 1 as one`), [{ one: 1 }], 'begin with options');
});

t.test('a transaction whose connection is cut by the deadline fails, and the pool goes on without it', async (t) => {
  const { url, sql: admin } = await createTestDatabase(t, { migrate: false });
  await admin`create table marks (n int)`;
  const sql = createSql(url, { max: 1, queryTimeoutMs: 1500 });
  t.teardown(() => sql.end({ timeout: 1 }));
  let late: Promise<unknown> | undefined;
  await t.rejects(
    sql.begin(async (tx) => {
      await tx`insert into marks values (1)`;
      try {
        await tx`select pg_sleep(4)`; // past the deadline: the connection is cut
      } catch (error) {
        late = Promise.resolve().then(() => tx`insert into marks values (2)`);
        throw error;
      }
    }),
    { code: 'DEPENDENCY_UNAVAILABLE' },
  );
  await t.rejects(late!, /outside its transaction/, 'a statement after the loss is refused, not run elsewhere');
  t.same(await sql`select count(*)::int as n from marks`, [{ n: 0 }], 'nothing was committed; the pool answers');
  t.same(await sql.begin((tx) => tx`select 1 as one`), [{ one: 1 }], 'and runs transactions again');
});
