import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { isWellFormedSecret } from '../../src/auth/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner, IDENTITY_TEST_SECRET_KEY, probePath, startIdentityShell } from '../helpers/identity.js';
import { createTestRedisStore } from '../helpers/store.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed: the CLI promises exactly one JSON object there. */
  json: Record<string, unknown>;
}

/** Runs `tsx src/cli.ts` (what `npm run cli --` runs) with a clean environment. */
function cli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: ROOT,
      env: {
        DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-cli-')),
        SECRET_KEY: IDENTITY_TEST_SECRET_KEY,
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stdout.split('\n').filter((l) => l.length > 0);
      let json: Record<string, unknown> = {};
      try {
        if (lines.length === 1) json = JSON.parse(lines[0]!) as Record<string, unknown>;
      } catch {
        // left empty: the assertions below report it
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.end(stdin ?? '');
  });
}

function oneJsonLine(t: Test, result: CliResult): void {
  t.equal(result.stdout.trim().split('\n').length, 1, 'exactly one line on stdout');
  t.doesNotThrow(() => JSON.parse(result.stdout), 'and it is JSON');
}

t.test('migrate, user:create, key:create against a fresh database', async (t) => {
  const database = await createTestDatabase(t, { migrate: false });
  const env = { DATABASE_URL: database.url };

  let r = await cli(['migrate'], env);
  t.equal(r.code, 0, r.stderr);
  oneJsonLine(t, r);
  t.match(r.json, { ok: true, applied: [{ version: 1 }, { version: 2, name: 'identity' }] });
  t.match(r.stderr, /migration applied/, 'logs go to stderr');
  r = await cli(['migrate'], env);
  t.equal(r.code, 0);
  t.same(r.json, { ok: true, applied: [] }, 'a second run has nothing to do');

  r = await cli(
    ['user:create', '--email', 'Op@Example.test', '--password', 'a long operator password', '--name', 'Operator'],
    env,
  );
  t.equal(r.code, 0, r.stderr);
  oneJsonLine(t, r);
  t.match(r.json, { userId: /^usr_/, accountId: /^acct_/, email: 'Op@Example.test' });
  const { userId, accountId } = r.json as { userId: string; accountId: string };
  t.notOk(r.stderr.includes('a long operator password'), 'the password is not echoed');

  const [row] = await database.sql<Array<{ planCode: string; ownerUserId: string }>>`
    select h.plan_code, a.owner_user_id from accounts a join hosting_accounts h on h.account_id = a.id where a.id = ${accountId}`;
  t.same(row, { planCode: 'free', ownerUserId: userId }, 'the account and its free hosting account exist');

  r = await cli(['user:create', '--email', 'op@example.test', '--password-stdin'], env, 'another long password\n');
  t.equal(r.code, 1, 'a taken email is a failure, not a usage error');
  t.match(r.json, { code: 'AUTH_EMAIL_TAKEN', error: String });

  r = await cli(['user:create', '--email', 'piped@example.test', '--password-stdin'], env, 'piped in password\n');
  t.equal(r.code, 0, 'the password can come from stdin');

  r = await cli(['key:create', '--email', 'op@example.test', '--scopes', 'chat,voice', '--name', 'ops'], env);
  t.equal(r.code, 0, r.stderr);
  oneJsonLine(t, r);
  t.match(r.json, { keyId: /^key_/, secret: /^sk_live_/, scopes: ['chat', 'voice'] });
  const secret = r.json['secret'] as string;
  t.ok(isWellFormedSecret(secret));
  t.notOk(r.stderr.includes(secret), 'the secret is printed once, on stdout only');

  // The key works, with exactly its scopes.
  const shell = await startIdentityShell(t, { sql: database.sql, store: await createTestRedisStore(t) });
  const voice = await fetch(`${shell.url}${probePath('voice')}`, { headers: bearer(secret) });
  t.equal(voice.status, 200);
  t.match(await voice.json(), { principal: { accountId, userId } });
  const docs = await fetch(`${shell.url}${probePath('documents:read')}`, { headers: bearer(secret) });
  t.equal(docs.status, 403);
  await docs.arrayBuffer();

  const audit = await database.sql<
    Array<{ action: string; actorUserId: string | null }>
  >`select action, actor_user_id from audit_log order by created_at`;
  t.same(
    audit.map((a) => a.action),
    ['user.created', 'user.created', 'api_key.created'],
    'operator changes are audited',
  );
  t.ok(
    audit.every((a) => a.actorUserId === null),
    'with the CLI as actor',
  );

  r = await cli(['key:create', '--email', 'nobody@example.test', '--scopes', 'chat'], env);
  t.equal(r.code, 1, 'an unknown user is a failure');
  t.match(r.json, { code: 'AUTH_USER_NOT_FOUND' });
});

t.test('admin:grant, admin:list and admin:revoke: operators without a restart, ADMIN_USER_IDS honoured', async (t) => {
  const database = await createTestDatabase(t);
  // The users come straight from the database helper: user:create is covered above, and every spawn costs a second.
  const { userId: first } = await createOwner(database.sql, { email: 'first@example.test' });
  const { userId: second } = await createOwner(database.sql, { email: 'second@example.test' });
  const env = { DATABASE_URL: database.url, ADMIN_USER_IDS: first };

  let r = await cli(['admin:grant', '--email', 'Second@Example.test'], env);
  t.equal(r.code, 0, r.stderr);
  oneJsonLine(t, r);
  t.match(r.json, { operator: { userId: second, grantedAt: String, fromConfig: false, isAdmin: true } });
  r = await cli(['admin:list'], env);
  t.same(
    (r.json['operators'] as Array<{ userId: string; fromConfig: boolean }>).map((o) => [o.userId, o.fromConfig]),
    [
      [first, true],
      [second, false],
    ],
    'the list names both roads',
  );

  r = await cli(['admin:revoke', '--email', 'first@example.test'], env);
  t.equal(r.code, 1, 'an operator by ADMIN_USER_IDS is not revoked here');
  t.match(r.json, { code: 'ADMIN_OPERATOR_FROM_CONFIG', error: /ADMIN_USER_IDS/ });
  r = await cli(['admin:revoke', '--email', 'second@example.test'], env);
  t.equal(r.code, 0, r.stderr);
  t.match(r.json, { operator: { userId: second, grantedAt: null, isAdmin: false } });
  r = await cli(['admin:grant', '--email', 'nobody@example.test'], env);
  t.equal(r.code, 1);
  t.match(r.json, { code: 'ADMIN_USER_NOT_FOUND' });

  const audit = await database.sql<Array<{ action: string; actorUserId: string | null; targetId: string }>>`
    select action, actor_user_id, target_id from audit_log where target_type = 'user' and action like 'user.admin%'
    order by created_at`;
  t.same(
    audit.map((a) => [a.action, a.targetId, a.actorUserId]),
    [
      ['user.admin_granted', second, null],
      ['user.admin_revoked', second, null],
    ],
    'each change audited, with the CLI as actor',
  );
});

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
  for (const [label, args] of cases) {
    const r = await cli(args, env);
    t.equal(r.code, 2, `${label}: exit 2`);
    oneJsonLine(t, r);
    t.match(r.json, { error: String, code: /^CLI_/ }, `${label}: a JSON error with a code`);
    t.match(r.stderr, /usage: npm run cli/, `${label}: usage on stderr`);
  }
  t.equal((await database.sql`select 1 from users`).length, 0, 'no user was created');
});
