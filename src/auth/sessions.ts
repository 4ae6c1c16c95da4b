import { createHash } from 'node:crypto';
import type { RateLimitResult } from '../store/types.js';
import { authErrors } from './errors.js';
import { newId } from './ids.js';
import { burnPasswordCheck, verifyPassword } from './password.js';
import * as q from './queries.js';
import type { ResilientRateLimiter } from './resilient-limiter.js';
import { newSessionToken, verifySessionCookie } from './session-token.js';
import type { AccountStatus, IdentityDeps } from './types.js';

/**
 * Sign-in attempts (successful or not: counting every attempt keeps concurrent guesses from slipping past a
 * read-then-count check). Per email: a burst of 10, then one more every 90 s. Per address: 100 per 15 min,
 * roomy enough for an office behind one NAT.
 */
const LOGIN_WINDOW_MS = 15 * 60_000;
const LOGIN_LIMIT_PER_EMAIL = 10;
const LOGIN_LIMIT_PER_ADDRESS = 100;

export interface SessionUser {
  user: { id: string; email: string; name: string | null; isAdmin: boolean };
  account: { id: string; status: AccountStatus };
}

export interface LiveSession extends SessionUser {
  sessionId: string;
  expiresAt: Date;
}

export interface StartedSession extends SessionUser {
  /** The cookie value: shown to this browser once, stored only as a hash. */
  cookieValue: string;
  maxAgeSeconds: number;
}

/** Counts one sign-in attempt for the email and the address; throws a plain 429 when either is exhausted. */
export async function countLoginAttempt(limiter: ResilientRateLimiter, email: string, ip: string): Promise<void> {
  const emailKey = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32);
  const [byEmail, byAddress] = await Promise.all([
    limiter.limit(`ratelimit:login:email:${emailKey}`, LOGIN_LIMIT_PER_EMAIL, LOGIN_WINDOW_MS),
    limiter.limit(`ratelimit:login:ip:${ip}`, LOGIN_LIMIT_PER_ADDRESS, LOGIN_WINDOW_MS),
  ]);
  const refused = [byEmail, byAddress].filter((r): r is RateLimitResult => !r.allowed);
  if (refused.length > 0) throw authErrors.rateLimited(Math.max(...refused.map((r) => r.retryAfterMs)));
}

/**
 * Checks email and password and opens a server-side session. Unknown email and wrong password give the same
 * answer after the same work. A disabled account cannot sign in; a suspended one can (to see why, and pay).
 */
export async function signIn(
  deps: IdentityDeps,
  input: { email: string; password: string; ip: string; userAgent: string | undefined },
): Promise<StartedSession> {
  const user = await q.findUserByEmail(deps.sql, input.email);
  if (!user) {
    await burnPasswordCheck(input.password);
    throw authErrors.invalidCredentials();
  }
  if (!(await verifyPassword(input.password, user.passwordHash))) throw authErrors.invalidCredentials();
  if (user.accountStatus === 'disabled') throw authErrors.accountDisabled();
  return openSession(deps, {
    userId: user.id,
    email: user.email,
    name: user.name,
    accountId: user.accountId,
    accountStatus: user.accountStatus,
    adminGranted: user.adminGranted,
    ip: input.ip,
    userAgent: input.userAgent,
  });
}

export async function openSession(
  deps: IdentityDeps,
  input: {
    userId: string;
    email: string;
    name: string | null;
    accountId: string;
    accountStatus: AccountStatus;
    /** Granted in the database (a brand-new user is not). */
    adminGranted?: boolean;
    ip: string;
    userAgent: string | undefined;
  },
): Promise<StartedSession> {
  const ttlSeconds = deps.config.SESSION_TTL_HOURS * 3600;
  const token = newSessionToken(deps.config.secretKey);
  await q.deleteDeadSessions(deps.sql, input.userId);
  await q.insertSession(deps.sql, {
    id: newId('ses'),
    userId: input.userId,
    tokenSha256: token.sha256,
    expiresAt: new Date(Date.now() + ttlSeconds * 1000),
    ip: input.ip || null,
    userAgent: input.userAgent?.slice(0, 300) ?? null,
  });
  return {
    cookieValue: token.cookieValue,
    maxAgeSeconds: ttlSeconds,
    user: {
      id: input.userId,
      email: input.email,
      name: input.name,
      isAdmin: isAdminUser(deps, input.userId, input.adminGranted),
    },
    account: { id: input.accountId, status: input.accountStatus },
  };
}

/** The live session behind a cookie value, or null (absent, forged, expired, revoked). No cache: logout is immediate. */
export async function findSession(deps: IdentityDeps, cookieValue: string | undefined): Promise<LiveSession | null> {
  if (cookieValue === undefined || cookieValue === '') return null;
  const tokenSha256 = verifySessionCookie(cookieValue, deps.config.secretKey);
  if (tokenSha256 === null) return null;
  const row = await q.findLiveSession(deps.sql, tokenSha256);
  if (!row) return null;
  return {
    sessionId: row.sessionId,
    expiresAt: row.expiresAt,
    user: {
      id: row.userId,
      email: row.email,
      name: row.name,
      isAdmin: isAdminUser(deps, row.userId, row.adminGranted),
    },
    account: { id: row.accountId, status: row.accountStatus },
  };
}

/** The user and account behind a resolved principal (for GET /api/auth/me). */
export async function describeUser(deps: IdentityDeps, userId: string): Promise<SessionUser | null> {
  const row = await q.findUserById(deps.sql, userId);
  if (!row) return null;
  return {
    user: { id: row.id, email: row.email, name: row.name, isAdmin: isAdminUser(deps, row.id, row.adminGranted) },
    account: { id: row.accountId, status: row.accountStatus },
  };
}

/** Revokes the session behind the cookie value, if any (idempotent). */
export async function signOut(deps: IdentityDeps, cookieValue: string | undefined): Promise<void> {
  if (!cookieValue) return;
  const tokenSha256 = verifySessionCookie(cookieValue, deps.config.secretKey);
  if (tokenSha256 !== null) await q.revokeSessionByTokenHash(deps.sql, tokenSha256);
}

/**
 * Operators are the user ids in ADMIN_USER_IDS plus the users granted in the database (the operator CLI or an
 * operator grants it; read with the session on every request, so a grant or revocation needs no restart).
 */
export function isAdminUser(deps: Pick<IdentityDeps, 'config'>, userId: string, granted = false): boolean {
  return granted || deps.config.ADMIN_USER_IDS.includes(userId);
}

/** Session cookies are Secure outside local development: in production, or whenever the public URL is https. */
export function secureCookies(deps: Pick<IdentityDeps, 'config'>): boolean {
  return deps.config.NODE_ENV === 'production' || deps.config.PUBLIC_URL?.startsWith('https:') === true;
}
