import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
import { createOwner } from '../helpers/identity.js';
import { cli, oneJsonLine } from './run-cli.js';

t.test('admin:grant, admin:list and admin:revoke: operators without a restart, ADMIN_USER_IDS honoured', async (t) => {
  const database = await createTestDatabase(t);
  // The users come straight from the database helper: user:create is covered in cli.test.ts, and every spawn costs a second.
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
