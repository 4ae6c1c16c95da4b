import type postgres from 'postgres';

/** A client or a transaction (a grant runs inside one with its audit row). */
export type Queryable = postgres.ISql<Record<string, never>>;

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  adminGrantedAt: Date | null;
}

/** Users granted in the database or listed in ADMIN_USER_IDS, by email. */
export function listOperatorRows(sql: postgres.Sql<Record<string, never>>, adminUserIds: readonly string[]) {
  return sql<UserRow[]>`
    select id, email, name, admin_granted_at from users
    where admin_granted_at is not null or id = any(${sql.array([...adminUserIds])}::text[])
    order by lower(email)`;
}

/** One user by id or (case-insensitive) email, locked until the transaction ends. */
export async function lockUserRow(
  sql: Queryable,
  who: { userId: string } | { email: string },
): Promise<UserRow | undefined> {
  const [row] =
    'userId' in who
      ? await sql<UserRow[]>`select id, email, name, admin_granted_at from users where id = ${who.userId} for update`
      : await sql<UserRow[]>`
          select id, email, name, admin_granted_at from users where lower(email) = lower(${who.email}) for update`;
  return row;
}

/** Sets or clears the grant; returns the grant time (null when cleared). */
export async function setAdminGrant(sql: Queryable, userId: string, granted: boolean): Promise<Date | null> {
  const [row] = await sql<{ adminGrantedAt: Date | null }[]>`
    update users set admin_granted_at = case when ${granted}::boolean then now() end, updated_at = now()
    where id = ${userId} returning admin_granted_at`;
  return row?.adminGrantedAt ?? null;
}

/** Whether the installation has any user yet (the start-up line says how to create the first owner when not). */
export async function hasAnyUser(sql: Queryable): Promise<boolean> {
  const [row] = await sql<{ any: boolean }[]>`select exists (select 1 from users) as any`;
  return row?.any === true;
}
