import { writeAuditLog } from '../audit/index.js';
import { validationError } from '../errors/index.js';
import type { Sql } from '../db/index.js';
import type { SharedStore } from '../store/types.js';
import { generateSecret } from './api-key-secret.js';
import { authErrors } from './errors.js';
import { newId } from './ids.js';
import { hashPassword } from './password.js';
import type { Scope } from './principal.js';
import * as q from './queries.js';
import type { AccountStatus } from './types.js';
import { displayNameSchema, emailSchema, newPasswordSchema, normalizeScopes, isScope } from './validation.js';

/** Keys an account may hold at once; more is a leak waiting to happen, not a use case. */
export const MAX_ACTIVE_KEYS = 100;
/** How long a "look again" marker lives in the shared store: longer than any instance caches a key. */
export const STALE_MARKER_TTL_MS = 60_000;

/** Revocations and account status changes name their keys here (comma-separated ids), for every instance. */
export const STALE_KEYS_CHANNEL = 'auth:stale-keys';

export function staleKeyMarker(keyId: string): string {
  return `auth:stale:key:${keyId}`;
}

/** Who made a change, for the audit log (operator CLI: actorUserId null). */
export interface AuditActor {
  actorUserId: string | null;
  requestId?: string;
}

export interface CreatedUser {
  userId: string;
  accountId: string;
  email: string;
}

/**
 * Creates a user, their account and its hosting account on plan free, in one transaction. The password is
 * stored only as a scrypt hash. A taken email (any letter case) is AUTH_EMAIL_TAKEN (409).
 */
export async function createUser(
  sql: Sql,
  input: { email: string; password: string; name?: string | undefined },
  options: { audit?: AuditActor } = {},
): Promise<CreatedUser> {
  const email = parseOr400(emailSchema, input.email, 'email');
  const password = parseOr400(newPasswordSchema, input.password, 'password');
  const name = input.name === undefined ? null : parseOr400(displayNameSchema, input.name, 'name');
  const passwordHash = await hashPassword(password);
  const userId = newId('usr');
  const accountId = newId('acct');
  try {
    await sql.begin(async (tx) => {
      await q.insertUser(tx, { id: userId, email, name, passwordHash });
      await q.insertAccount(tx, { id: accountId, ownerUserId: userId, name });
      await q.insertHostingAccount(tx, accountId);
      if (options.audit) {
        await writeAuditLog(tx, {
          ...options.audit,
          action: 'user.created',
          targetType: 'user',
          targetId: userId,
          after: { email, name, accountId, planCode: 'free' },
        });
      }
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw authErrors.emailTaken();
    throw err;
  }
  return { userId, accountId, email };
}

export interface ApiKeyView {
  id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface CreatedApiKey {
  keyId: string;
  /** Shown once; never stored or logged. */
  secret: string;
  scopes: Scope[];
  prefix: string;
  key: ApiKeyView;
}

/**
 * Creates an API key with exactly the given scopes (unknown scopes are a 400; `voice` is never implied).
 * The secret is returned here and nowhere else; only its SHA-256 is stored.
 */
export async function createApiKey(
  sql: Sql,
  input: { accountId: string; userId: string | null; name: string; scopes: readonly string[] },
  options: { audit?: AuditActor } = {},
): Promise<CreatedApiKey> {
  const unknown = input.scopes.filter((s) => !isScope(s));
  if (unknown.length > 0 || input.scopes.length === 0) {
    throw validationError(
      [
        {
          path: 'scopes',
          message: unknown.length > 0 ? `unknown scopes: ${unknown.join(', ')}` : 'give at least one scope',
        },
      ],
      'scopes',
    );
  }
  const scopes = normalizeScopes(input.scopes as Scope[]);
  const name = parseOr400(displayNameSchema, input.name, 'name');
  const generated = generateSecret();
  const keyId = newId('key');
  const row = await sql.begin(async (tx) => {
    // Serialises key creation per account so the limit holds under concurrent requests.
    const account = await q.lockAccount(tx, input.accountId);
    if (!account) throw authErrors.accountNotFound();
    if ((await q.countActiveApiKeys(tx, input.accountId)) >= MAX_ACTIVE_KEYS)
      throw authErrors.keyLimit(MAX_ACTIVE_KEYS);
    const inserted = await q.insertApiKey(tx, {
      id: keyId,
      accountId: input.accountId,
      userId: input.userId,
      name,
      prefix: generated.prefix,
      secretSha256: generated.sha256,
      scopes,
    });
    if (options.audit) {
      await writeAuditLog(tx, {
        ...options.audit,
        action: 'api_key.created',
        targetType: 'api_key',
        targetId: keyId,
        after: { accountId: input.accountId, name, scopes, prefix: generated.prefix },
      });
    }
    return inserted;
  });
  return { keyId, secret: generated.secret, scopes, prefix: generated.prefix, key: toKeyView(row) };
}

export async function listApiKeys(sql: Sql, accountId: string): Promise<ApiKeyView[]> {
  return (await q.listActiveApiKeys(sql, accountId)).map(toKeyView);
}

/**
 * Revokes a key of this account. Effective on the next request on every instance: the database row is the
 * truth, and a marker in the shared store tells every instance to skip its short cache for this key.
 * Returns false when the account has no such active key.
 */
export async function revokeApiKey(
  sql: Sql,
  store: SharedStore,
  input: { accountId: string; keyId: string },
): Promise<boolean> {
  const revoked = await q.revokeApiKey(sql, input.accountId, input.keyId);
  if (!revoked) return false;
  await markKeysStale(store, [revoked]);
  return true;
}

/**
 * Tells every instance to re-read these keys from the database on their next use (revocation, account status
 * change). If the store is down, instance caches still expire within seconds.
 */
export async function markKeysStale(store: SharedStore, keyIds: readonly string[]): Promise<void> {
  await Promise.all(
    keyIds.map((id) => store.set(staleKeyMarker(id), '1', { ttlMs: STALE_MARKER_TTL_MS }).catch(() => false)),
  );
  // Instances subscribed to the channel drop these keys from their caches on delivery (no read per request);
  // the markers above cover instances whose subscription is down. Published after the markers are written.
  if (keyIds.length > 0) await store.publish?.(STALE_KEYS_CHANNEL, keyIds.join(',')).catch(() => undefined);
}

/** For whoever changes an account's (or hosting account's) status: its keys are re-checked on the next request. */
export async function markAccountKeysStale(sql: Sql, store: SharedStore, accountId: string): Promise<void> {
  await markKeysStale(store, await q.listApiKeyIds(sql, accountId));
}

/**
 * Sets an account's status (active | suspended | disabled), audit-logged in the same transaction. Keys of a
 * suspended or disabled account stop working on the next request. Returns the previous status, or undefined
 * when there is no such account.
 */
export async function setAccountStatus(
  sql: Sql,
  store: SharedStore,
  input: { accountId: string; status: AccountStatus } & AuditActor,
): Promise<{ before: AccountStatus } | undefined> {
  const result = await sql.begin(async (tx) => {
    const current = await q.lockAccount(tx, input.accountId);
    if (!current) return undefined;
    if (current.status !== input.status) {
      await q.setAccountStatus(tx, input.accountId, input.status);
      await writeAuditLog(tx, {
        actorUserId: input.actorUserId,
        ...(input.requestId !== undefined ? { requestId: input.requestId } : {}),
        action: 'account.status_changed',
        targetType: 'account',
        targetId: input.accountId,
        before: { status: current.status },
        after: { status: input.status },
      });
    }
    return { before: current.status };
  });
  if (result) await markAccountKeysStale(sql, store, input.accountId);
  return result;
}

export async function findUserByEmail(sql: Sql, email: string): Promise<q.UserWithAccount | undefined> {
  return q.findUserByEmail(sql, email);
}

function toKeyView(row: q.ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    scopes: normalizeScopes(row.scopes.filter(isScope)),
    prefix: row.prefix,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
  };
}

function parseOr400<T>(
  schema: {
    safeParse(
      v: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: Array<{ message: string }> } };
  },
  value: unknown,
  field: string,
): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw validationError(
    parsed.error.issues.map((i) => ({ path: field, message: i.message })),
    field,
  );
}

export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}
