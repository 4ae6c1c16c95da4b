/**
 * Operators (admins) granted in the database, beside the user ids in ADMIN_USER_IDS. A grant or revocation is read
 * with the session on the user's next request (src/auth), so it needs no restart. Only the operator CLI (the OS
 * user that runs the server) and an existing operator can change it; each change writes one audit row in its own
 * transaction. ADMIN_USER_IDS stays authoritative for the ids it lists: they cannot be revoked here.
 */
import { writeAuditLog } from '../audit/index.js';
import type { Sql } from '../db/index.js';
import { adminErrors } from './errors.js';
import * as oq from './operator-queries.js';
import type { Queryable } from './operator-queries.js';

export interface OperatorView {
  userId: string;
  email: string;
  name: string | null;
  /** When the database grant was made; null when the user is an operator only through ADMIN_USER_IDS. */
  grantedAt: string | null;
  /** Listed in ADMIN_USER_IDS (an operator whatever the database says, until the list changes). */
  fromConfig: boolean;
  /** An operator now, by either road. */
  isAdmin: boolean;
}

/** Who acts: a signed-in operator (with the request id), or the CLI (null). */
export interface OperatorActor {
  actorUserId: string | null;
  requestId?: string | undefined;
}

function present(row: oq.UserRow, adminUserIds: readonly string[]): OperatorView {
  const fromConfig = adminUserIds.includes(row.id);
  return {
    userId: row.id,
    email: row.email,
    name: row.name,
    grantedAt: row.adminGrantedAt?.toISOString() ?? null,
    fromConfig,
    isAdmin: fromConfig || row.adminGrantedAt !== null,
  };
}

/** Every operator: granted in the database or listed in ADMIN_USER_IDS (ids there that match no user are left out). */
export async function listOperators(sql: Sql, adminUserIds: readonly string[]): Promise<OperatorView[]> {
  return (await oq.listOperatorRows(sql, adminUserIds)).map((r) => present(r, adminUserIds));
}

/** The user behind a user id or an email (either names one user), row-locked, or a 404. */
async function lockUser(tx: Queryable, who: { userId: string } | { email: string }): Promise<oq.UserRow> {
  const row = await oq.lockUserRow(tx, who);
  if (!row) throw adminErrors.userNotFound();
  return row;
}

/** Grants operator rights in the database (idempotent: a second grant changes nothing and writes no audit row). */
export async function grantOperator(
  sql: Sql,
  adminUserIds: readonly string[],
  who: { userId: string } | { email: string },
  actor: OperatorActor,
): Promise<OperatorView> {
  const row = await sql.begin(async (tx) => {
    const user = await lockUser(tx, who);
    if (user.adminGrantedAt !== null) return user;
    const grantedAt = await oq.setAdminGrant(tx, user.id, true);
    await writeAuditLog(tx, {
      actorUserId: actor.actorUserId,
      ...(actor.requestId === undefined ? {} : { requestId: actor.requestId }),
      action: 'user.admin_granted',
      targetType: 'user',
      targetId: user.id,
      before: { admin: adminUserIds.includes(user.id) ? 'config' : false },
      after: { admin: true, grantedAt: grantedAt!.toISOString() },
    });
    return { ...user, adminGrantedAt: grantedAt };
  });
  return present(row, adminUserIds);
}

/**
 * Revokes the database grant (idempotent). A user listed in ADMIN_USER_IDS is refused with 409: revoking would
 * change nothing they can do, and saying "revoked" would mislead; the list is changed where it is set.
 */
export async function revokeOperator(
  sql: Sql,
  adminUserIds: readonly string[],
  who: { userId: string } | { email: string },
  actor: OperatorActor,
): Promise<OperatorView> {
  const row = await sql.begin(async (tx) => {
    const user = await lockUser(tx, who);
    if (adminUserIds.includes(user.id)) throw adminErrors.operatorFromConfig();
    if (user.adminGrantedAt === null) return user;
    await oq.setAdminGrant(tx, user.id, false);
    await writeAuditLog(tx, {
      actorUserId: actor.actorUserId,
      ...(actor.requestId === undefined ? {} : { requestId: actor.requestId }),
      action: 'user.admin_revoked',
      targetType: 'user',
      targetId: user.id,
      before: { admin: true, grantedAt: user.adminGrantedAt.toISOString() },
      after: { admin: false },
    });
    return { ...user, adminGrantedAt: null };
  });
  return present(row, adminUserIds);
}
