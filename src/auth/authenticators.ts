import type { Authenticator, RequestContext, RouteMeta } from '../http/index.js';
import { isWellFormedSecret } from './api-key-secret.js';
import { isMutation, isSameOrigin } from './csrf.js';
import { authErrors } from './errors.js';
import { ApiKeyResolver } from './key-resolver.js';
import type { Principal } from './principal.js';
import { LeasedRateLimiter } from './lease-limiter.js';
import { ResilientRateLimiter } from './resilient-limiter.js';
import { findSession, secureCookies } from './sessions.js';
import { clearedSessionCookie, readCookie, SESSION_COOKIE } from './session-token.js';
import type { IdentityDeps } from './types.js';
import { isScope } from './validation.js';

const RATE_PERIOD_MS = 60_000;
/** `Bearer <token>`: scheme case-insensitive (RFC 9110 §11.1), one space or more, no trailing garbage. */
const BEARER = /^Bearer +(\S+)$/i;

/**
 * The identity authenticators, registered by name in app.ts:
 * - `bearer`: `Authorization: Bearer sk_live_...`; 401 missing/invalid, per-key rate limit (429; not for routes
 *   flagged `rateLimitExempt`), account status (403), then `routeMeta.scope` (403). RateLimit-Policy / RateLimit
 *   headers on every rate-limited answer.
 * - `bearer-or-keyless`: exactly `bearer` when an Authorization header is present, else `{ kind: 'keyless' }`.
 * - `session`: the dashboard cookie; CSRF Origin check on POST/PUT/PATCH/DELETE.
 * - `admin`: `session` of an operator: in ADMIN_USER_IDS or granted in the database (401 without a session, 403 otherwise).
 */
export function createAuthenticators(deps: IdentityDeps): Record<string, Authenticator> {
  const resolver = new ApiKeyResolver(deps);
  const limiter = new LeasedRateLimiter(new ResilientRateLimiter(deps.store, deps.log));
  const limit = deps.config.API_RATE_LIMIT_PER_MINUTE;
  const policy = `${limit};w=${RATE_PERIOD_MS / 1000}`;

  const bearer = async (ctx: RequestContext, route: RouteMeta): Promise<Principal> => {
    const header = ctx.headers['authorization'];
    // The owner dashboard (web/dashboard) calls the owner REST routes with its session cookie instead of a key: the
    // signed-in owner may do everything a key of theirs could (same account, CSRF Origin check on mutations).
    if (header === undefined && hasSessionCookie(ctx)) return session(ctx);
    if (!route.rateLimitExempt) ctx.responseHeaders['ratelimit-policy'] = policy;
    if (header === undefined || header.trim() === '') throw authErrors.missingKey();
    const secret = BEARER.exec(header.trim())?.[1];
    // Shape and checksum first: a typo or a guess costs no database lookup.
    if (secret === undefined || !isWellFormedSecret(secret)) throw authErrors.invalidKey();
    const resolving = resolver.resolve(secret, ctx); // no await (no round trip) when cached
    const key = resolving instanceof Promise ? await resolving : resolving;
    if (key === null) throw authErrors.invalidKey();
    if (key.revoked) throw authErrors.keyRevoked();

    // Routes flagged rateLimitExempt (voice end, heartbeat) are neither counted nor refused: a busy key can always hang
    // up.
    if (!route.rateLimitExempt) {
      const limiting = limiter.limit(`ratelimit:key:${key.keyId}`, limit, RATE_PERIOD_MS);
      const rate = limiting instanceof Promise ? await limiting : limiting;
      ctx.responseHeaders['ratelimit'] =
        `limit=${limit}, remaining=${rate.remaining}, reset=${Math.ceil(rate.resetMs / 1000)}`;
      if (!rate.allowed) throw authErrors.rateLimited(rate.retryAfterMs);
    }

    if (key.accountStatus === 'suspended') throw authErrors.accountSuspended();
    if (key.accountStatus === 'disabled') throw authErrors.accountDisabled();
    const scope = route.scope;
    if (scope !== undefined) {
      if (!isScope(scope)) throw new Error(`route ${route.method} ${route.path} requires unknown scope "${scope}"`);
      if (!key.scopes.includes(scope)) throw authErrors.missingScope(scope);
    }
    const recording = resolver.recordUse(key.keyId, ctx);
    if (recording !== undefined) await recording;
    return { kind: 'api_key', accountId: key.accountId, userId: key.userId, keyId: key.keyId, scopes: key.scopes };
  };

  const session = async (ctx: RequestContext): Promise<Principal> => {
    const cookie = readCookie(ctx.headers['cookie'], SESSION_COOKIE);
    const live = await findSession(deps, cookie);
    if (!live) {
      // A cookie that no longer opens anything is cleared, so the browser stops sending it.
      if (cookie !== undefined) ctx.setCookies.push(clearedSessionCookie(secureCookies(deps)));
      throw authErrors.sessionRequired();
    }
    if (live.account.status === 'disabled') throw authErrors.accountDisabled();
    if (isMutation(ctx.method) && !isSameOrigin(ctx, deps.config.PUBLIC_URL, deps.config.TRUST_PROXY))
      throw authErrors.csrf();
    return sessionPrincipal(live);
  };

  const admin = async (ctx: RequestContext): Promise<Principal> => {
    const principal = await session(ctx);
    if (principal.kind !== 'session' || !principal.isAdmin) throw authErrors.notAdmin();
    return principal;
  };

  /**
   * A key when one is sent; else the owner's dashboard session when a live one comes from the dashboard's own origin
   * (the playground: chat as the owner, source playground); else keyless. A stale or cross-origin cookie never
   * refuses a widget visitor: it is simply keyless.
   */
  const bearerOrKeyless = async (ctx: RequestContext, route: RouteMeta): Promise<Principal> => {
    if (ctx.headers['authorization'] !== undefined) return bearer(ctx, route);
    if (hasSessionCookie(ctx) && isSameOrigin(ctx, deps.config.PUBLIC_URL, deps.config.TRUST_PROXY)) {
      const live = await findSession(deps, readCookie(ctx.headers['cookie'], SESSION_COOKIE));
      if (live && live.account.status !== 'disabled') return sessionPrincipal(live);
    }
    return { kind: 'keyless' };
  };

  return { bearer, session, admin, 'bearer-or-keyless': bearerOrKeyless };
}

function sessionPrincipal(live: NonNullable<Awaited<ReturnType<typeof findSession>>>): Principal {
  return {
    kind: 'session',
    accountId: live.account.id,
    userId: live.user.id,
    sessionId: live.sessionId,
    isAdmin: live.user.isAdmin,
  };
}

function hasSessionCookie(ctx: RequestContext): boolean {
  return readCookie(ctx.headers['cookie'], SESSION_COOKIE) !== undefined;
}
