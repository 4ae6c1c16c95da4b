import t from 'tap';
import { createSql } from '../../src/db/client.js';
import { asDependencyFailure, AppError } from '../../src/errors/index.js';
import { createTestDatabase } from '../helpers/db.js';

/**
 * A statement waiting on a row lock is bounded by the query deadline too: another transaction that holds the row
 * (a stuck request, a slow settlement) must not make a request wait for as long as it holds it. Before, a
 * `select ... for update` behind a held lock waited ~11 s and more under a 2 s deadline.
 */
t.test('a statement waiting on a row lock fails with the 503 at the deadline', async (t) => {
  const { url, sql: admin } = await createTestDatabase(t, { migrate: false });
  await admin`create table rows (id int primary key, n int)`;
  await admin`insert into rows values (1, 0)`;
  const holder = createSql(url, { max: 1 });
  const sql = createSql(url, { max: 1, queryTimeoutMs: 1000 });
  t.teardown(async () => {
    await sql.end({ timeout: 1 });
    await holder.end({ timeout: 1 });
  });

  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding = holder.begin(async (tx) => {
    await tx`select n from rows where id = 1 for update`;
    locked();
    await released;
  });
  await isLocked;

  // The hang this guards against would outlast tap's own timeout; the race only turns it into a readable failure.
  const outcome = await Promise.race([
    sql
      .begin((tx) => tx`select n from rows where id = 1 for update`)
      .then(
        () => 'acquired' as const,
        // What the HTTP shell answers for it: an AppError as it is, a dependency's failure as the 503, else a 500.
        (error: unknown) => (error instanceof AppError ? error : asDependencyFailure(error))?.code ?? String(error),
      ),
    new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 20_000).unref()),
  ]);
  t.equal(outcome, 'DEPENDENCY_UNAVAILABLE', 'the waiter gets the bounded 503, not the row after the holder lets go');
  release();
  await holding;
  t.same(await sql`select n from rows where id = 1`, [{ n: 0 }], 'the pool answers again once the lock is gone');
});
