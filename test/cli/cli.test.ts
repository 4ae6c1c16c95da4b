import t from 'tap';
import { isWellFormedSecret } from '../../src/auth/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner, probePath, startIdentityShell } from '../helpers/identity.js';
import { createTestRedisStore } from '../helpers/store.js';
import { cli, oneJsonLine } from './run-cli.js';

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
  t.match(r.json, { userId: /^usr_/, accountId: /^acct_/, email: 'Op@Example.test', operator: true });
  t.match(
    r.stderr,
    /first owner of a self-hosted server is its operator/,
    'no billing: the first owner runs the server',
  );
  const { userId, accountId } = r.json as { userId: string; accountId: string };
  const [granted] = await database.sql<Array<{ adminGrantedAt: Date | null }>>`
    select admin_granted_at from users where id = ${userId}`;
  t.ok(granted?.adminGrantedAt, 'and is granted in the database (dashboard Admin)');
  t.notOk(r.stderr.includes('a long operator password'), 'the password is not echoed');

  const [row] = await database.sql<Array<{ planCode: string; ownerUserId: string }>>`
    select h.plan_code, a.owner_user_id from accounts a join hosting_accounts h on h.account_id = a.id where a.id = ${accountId}`;
  t.same(row, { planCode: 'free', ownerUserId: userId }, 'the account and its free hosting account exist');

  r = await cli(['user:create', '--email', 'op@example.test', '--password-stdin'], env, 'another long password\n');
  t.equal(r.code, 1, 'a taken email is a failure, not a usage error');
  t.match(r.json, { code: 'AUTH_EMAIL_TAKEN', error: String });

  r = await cli(['user:create', '--email', 'piped@example.test', '--password-stdin'], env, 'piped in password\n');
  t.equal(r.code, 0, 'the password can come from stdin');
  t.match(r.json, { operator: false }, 'a later user is not an operator');
  t.match(r.stderr, /npm run cli -- admin:grant --email piped@example\.test/, 'the CLI says how to make one');

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
    ['user.created', 'user.admin_granted', 'user.created', 'api_key.created'],
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
