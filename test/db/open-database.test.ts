import t from 'tap';
import { openDatabase } from '../../src/db/index.js';
import { readMigrationFiles } from '../../src/db/migrate.js';
import { createTestDatabase } from '../helpers/db.js';
import { captureLogger } from '../helpers/log.js';

t.test('with DATABASE_URL: uses it, migrates, logs no credentials, closes', async (t) => {
  const { url } = await createTestDatabase(t, { migrate: false });
  const logs = captureLogger();
  const db = await openDatabase({ databaseUrl: url, dataDir: '/nonexistent-unused', poolSize: 3, log: logs.log });
  t.equal(db.embedded, false);
  t.equal(db.url, url);
  const files = await readMigrationFiles();
  t.same(
    db.applied.map((m) => m.version),
    files.map((f) => f.version),
  );
  t.match(
    logs.lines.find((l) => l.msg === 'using postgres'),
    { database: { host: '127.0.0.1' }, poolSize: 3 },
  );
  await db.close();
  await db.close();
  await t.rejects(db.sql`select 1`, 'the client is closed');
});

t.test('an unreachable DATABASE_URL fails the boot clearly', async (t) => {
  const { log } = captureLogger();
  await t.rejects(
    openDatabase({ databaseUrl: 'postgres://x:secret@127.0.0.1:1/none', dataDir: '/unused', poolSize: 1, log }),
    { message: /^Cannot reach PostgreSQL at 127\.0\.0\.1:1\/none: (?!.*secret)/ },
  );
});
