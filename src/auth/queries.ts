import type postgres from 'postgres';
import type { AccountStatus } from './types.js';

/** A client or a transaction: every query here runs inside a caller's `sql.begin` when it must. */
export type Queryable = postgres.ISql<Record<string, never>>;

// ---- users and accounts -------------------------------------------------------------------------------

export async function insertUser(
  sql: Queryable,
  user: { id: string; email: string; name: string | null; passwordHash: string },
): Promise<void> {
  await sql`
    insert into users (id, email, name, password_hash)
    values (${user.id}, ${user.email}, ${user.name}, ${user.passwordHash})`;
}

export async function insertAccount(
  sql: Queryable,
  account: { id: string; ownerUserId: string; name: string | null },
): Promise<void> {
  await sql`insert into accounts (id, owner_user_id, name) values (${account.id}, ${account.ownerUserId}, ${account.name})`;
}

/** New accounts start on plan free (docs/design-decisions.md, Identity). */
export async function insertHostingAccount(sql: Queryable, accountId: string): Promise<void> {
  await sql`insert into hosting_accounts (account_id, plan_code) values (${accountId}, 'free')`;
}

export interface UserWithAccount {
  id: string;
  email: string;
  name: string | null;
  passwordHash: string;
  accountId: string;
  accountStatus: AccountStatus;
  /** An operator by the database's grant (ADMIN_USER_IDS is the other road). */
  adminGranted: boolean;
}

export async function findUserByEmail(sql: Queryable, email: string): Promise<UserWithAccount | undefined> {
  const [row] = await sql<UserWithAccount[]>`
    select u.id, u.email, u.name, u.password_hash, a.id as account_id, ${effectiveStatus(sql)} as account_status,
           u.admin_granted_at is not null as admin_granted
    from users u
    join accounts a on a.owner_user_id = u.id
    left join hosting_accounts h on h.account_id = a.id
    where lower(u.email) = lower(${email})`;
  return row;
}

export async function findUserById(
  sql: Queryable,
  userId: string,
): Promise<Omit<UserWithAccount, 'passwordHash'> | undefined> {
  const [row] = await sql<Omit<UserWithAccount, 'passwordHash'>[]>`
    select u.id, u.email, u.name, a.id as account_id, ${effectiveStatus(sql)} as account_status,
           u.admin_granted_at is not null as admin_granted
    from users u
    join accounts a on a.owner_user_id = u.id
    left join hosting_accounts h on h.account_id = a.id
    where u.id = ${userId}`;
  return row;
}

export async function findAccountStatus(sql: Queryable, accountId: string): Promise<AccountStatus | undefined> {
  const [row] = await sql<{ status: AccountStatus }[]>`
    select ${effectiveStatus(sql)} as status
    from accounts a left join hosting_accounts h on h.account_id = a.id
    where a.id = ${accountId}`;
  return row?.status;
}

/** The account's own status, row-locked until the caller's transaction ends. */
export async function lockAccount(sql: Queryable, accountId: string): Promise<{ status: AccountStatus } | undefined> {
  const [row] = await sql<{ status: AccountStatus }[]>`select status from accounts where id = ${accountId} for update`;
  return row;
}

export async function setAccountStatus(sql: Queryable, accountId: string, status: AccountStatus): Promise<void> {
  await sql`update accounts set status = ${status} where id = ${accountId}`;
}

/**
 * The status that decides access: the worse of the account's own status and its hosting account's (the admin
 * route may set either). Order: disabled > suspended > active. Needs `a` (accounts) and `h` (hosting_accounts).
 */
function effectiveStatus(sql: Queryable) {
  return sql`case
    when a.status = 'disabled' or h.status = 'disabled' then 'disabled'
    when a.status = 'suspended' or h.status = 'suspended' then 'suspended'
    else 'active' end`;
}

// ---- sessions -----------------------------------------------------------------------------------------

export async function insertSession(
  sql: Queryable,
  session: {
    id: string;
    userId: string;
    tokenSha256: string;
    expiresAt: Date;
    ip: string | null;
    userAgent: string | null;
  },
): Promise<void> {
  await sql`
    insert into sessions (id, user_id, token_sha256, expires_at, ip, user_agent)
    values (${session.id}, ${session.userId}, ${session.tokenSha256}, ${session.expiresAt}, ${session.ip}, ${session.userAgent})`;
}

export interface SessionRow {
  sessionId: string;
  userId: string;
  email: string;
  name: string | null;
  accountId: string;
  accountStatus: AccountStatus;
  adminGranted: boolean;
  expiresAt: Date;
}

/** A live session (not revoked, not expired by the database clock) with its user and account. */
export async function findLiveSession(sql: Queryable, tokenSha256: string): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select s.id as session_id, s.user_id, u.email, u.name, a.id as account_id, s.expires_at,
           ${effectiveStatus(sql)} as account_status, u.admin_granted_at is not null as admin_granted
    from sessions s
    join users u on u.id = s.user_id
    join accounts a on a.owner_user_id = u.id
    left join hosting_accounts h on h.account_id = a.id
    where s.token_sha256 = ${tokenSha256} and s.revoked_at is null and s.expires_at > now()`;
  return row;
}

export async function revokeSessionByTokenHash(sql: Queryable, tokenSha256: string): Promise<void> {
  await sql`update sessions set revoked_at = now() where token_sha256 = ${tokenSha256} and revoked_at is null`;
}

/** Housekeeping at sign-in: a user's expired or long-revoked rows are of no use. */
export async function deleteDeadSessions(sql: Queryable, userId: string): Promise<void> {
  await sql`
    delete from sessions
    where user_id = ${userId} and (expires_at < now() or revoked_at < now() - interval '1 day')`;
}

// ---- API keys -----------------------------------------------------------------------------------------

export interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
}

export async function insertApiKey(
  sql: Queryable,
  key: {
    id: string;
    accountId: string;
    userId: string | null;
    name: string;
    prefix: string;
    secretSha256: string;
    scopes: readonly string[];
  },
): Promise<ApiKeyRow> {
  const [row] = await sql<ApiKeyRow[]>`
    insert into api_keys (id, account_id, created_by_user_id, name, prefix, secret_sha256, scopes)
    values (${key.id}, ${key.accountId}, ${key.userId}, ${key.name}, ${key.prefix}, ${key.secretSha256}, ${sql.array([...key.scopes])})
    returning id, name, prefix, scopes, created_at, last_used_at`;
  return row!;
}

export async function listActiveApiKeys(sql: Queryable, accountId: string): Promise<ApiKeyRow[]> {
  return sql<ApiKeyRow[]>`
    select id, name, prefix, scopes, created_at, last_used_at
    from api_keys
    where account_id = ${accountId} and revoked_at is null
    order by created_at desc, id`;
}

export async function countActiveApiKeys(sql: Queryable, accountId: string): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`select count(*) as n from api_keys where account_id = ${accountId} and revoked_at is null`;
  return row?.n ?? 0;
}

export interface ResolvedKeyRow {
  keyId: string;
  accountId: string;
  userId: string | null;
  ownerUserId: string;
  scopes: string[];
  secretSha256: string;
  revoked: boolean;
  accountStatus: AccountStatus;
}

export async function findApiKeyByHash(sql: Queryable, secretSha256: string): Promise<ResolvedKeyRow | undefined> {
  const [row] = await sql<ResolvedKeyRow[]>`
    select k.id as key_id, k.account_id, k.created_by_user_id as user_id, a.owner_user_id, k.scopes, k.secret_sha256,
           (k.revoked_at is not null) as revoked, ${effectiveStatus(sql)} as account_status
    from api_keys k
    join accounts a on a.id = k.account_id
    left join hosting_accounts h on h.account_id = a.id
    where k.secret_sha256 = ${secretSha256}`;
  return row;
}

/** Returns the key's id when this call revoked it (an already revoked or foreign key gives undefined). */
export async function revokeApiKey(sql: Queryable, accountId: string, keyId: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`
    update api_keys set revoked_at = now()
    where id = ${keyId} and account_id = ${accountId} and revoked_at is null
    returning id`;
  return row?.id;
}

export async function touchApiKeyLastUsed(sql: Queryable, keyId: string): Promise<void> {
  await sql`update api_keys set last_used_at = now() where id = ${keyId}`;
}

export async function listApiKeyIds(sql: Queryable, accountId: string): Promise<string[]> {
  const rows = await sql<
    { id: string }[]
  >`select id from api_keys where account_id = ${accountId} and revoked_at is null`;
  return rows.map((r) => r.id);
}
