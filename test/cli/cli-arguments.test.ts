import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
import { cli, oneJsonLine, type CliResult } from './run-cli.js';

t.test('bad arguments exit 2 with a JSON error and touch nothing', async (t) => {
  const database = await createTestDatabase(t);
  const env = { DATABASE_URL: database.url };
  const cases: Array<[string, string[]]> = [
    ['no command', []],
    ['unknown command', ['user:delete']],
    ['unknown flag', ['user:create', '--email', 'a@example.test', '--password', 'long enough pw', '--admin']],
    ['missing email', ['user:create', '--password', 'long enough pw']],
    ['missing password', ['user:create', '--email', 'a@example.test']],
    ['bad email', ['user:create', '--email', 'not-an-email', '--password', 'long enough pw']],
    ['short password', ['user:create', '--email', 'a@example.test', '--password', 'short']],
    [
      'oversized name',
      ['user:create', '--email', 'a@example.test', '--password', 'long enough pw', '--name', 'n'.repeat(101)],
    ],
    ['flag without value', ['user:create', '--email']],
    ['unknown scope', ['key:create', '--email', 'a@example.test', '--scopes', 'chat,admin']],
    ['no scopes', ['key:create', '--email', 'a@example.test']],
    ['empty scopes', ['key:create', '--email', 'a@example.test', '--scopes', ',']],
    ['extra argument', ['migrate', 'now']],
    ['admin:grant without email', ['admin:grant']],
    ['admin:revoke with a bad email', ['admin:revoke', '--email', 'nope']],
    ['admin:list with a flag', ['admin:list', '--email', 'a@example.test']],
  ];
  // Four at a time: each is a process start, and the cases are independent.
  const results = new Map<string, CliResult>();
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4);
    const done = await Promise.all(batch.map(([, args]) => cli(args, env)));
    batch.forEach(([label], j) => results.set(label, done[j]!));
  }
  for (const [label] of cases) {
    const r = results.get(label)!;
    t.equal(r.code, 2, `${label}: exit 2`);
    oneJsonLine(t, r);
    t.match(r.json, { error: String, code: /^CLI_/ }, `${label}: a JSON error with a code`);
    t.match(r.stderr, /usage: npm run cli/, `${label}: usage on stderr`);
  }
  t.equal((await database.sql`select 1 from users`).length, 0, 'no user was created');
});
