import { AppError } from '../errors/index.js';
import type { RequestContext } from '../http/index.js';

/** The documented scopes (docs/api.md, Scopes), exactly. `voice` is never implied by `chat`. */
export const SCOPES = [
  'chat',
  'assistants:read',
  'assistants:write',
  'documents:read',
  'documents:write',
  'conversations:read',
  'conversations:write',
  'analytics:read',
  'voice',
  'webhooks',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Who is calling. Authenticators (registered by the identity capability under the names
 * "bearer", "session", "admin" and "bearer-or-keyless") put one of these on ctx.principal.
 */
export type Principal =
  | { kind: 'api_key'; accountId: string; userId: string; keyId: string; scopes: readonly Scope[] }
  | { kind: 'session'; accountId: string; userId: string; sessionId: string; isAdmin: boolean }
  /** No Authorization header on a keyless-capable route (widget, playground): the public asst_ id is the capability. */
  | { kind: 'keyless' };

export type OwnerPrincipal = Extract<Principal, { kind: 'api_key' | 'session' }>;

/** The principal an authenticator resolved; throws if a route was wired without one (a programming error). */
export function principalOf(ctx: RequestContext<unknown, unknown, unknown>): Principal {
  const p = ctx.principal as Principal | undefined;
  if (!p) throw new Error(`route ${ctx.route.method} ${ctx.route.path} has no principal: is its auth "none"?`);
  return p;
}

/** The owning account of a bearer or dashboard caller. */
export function ownerOf(ctx: RequestContext<unknown, unknown, unknown>): OwnerPrincipal {
  const p = principalOf(ctx);
  if (p.kind === 'keyless') throw new AppError('AUTH_REQUIRED', 401, 'Sign in or send an API key.');
  return p;
}

export type CallerSource = 'api' | 'widget' | 'playground' | 'test';

/**
 * Where a chat or voice call comes from, decided by who the caller is, never by what the body claims: `playground`
 * (exempt from voice minutes by default) only for the signed-in owner's dashboard session, which bearer-or-keyless
 * admits only from Parley's own origin; a keyless caller is always `widget` and an API key always `api`, whatever
 * `source` they send (the contract lets no-Bearer callers name the source, so asking is not refused: it is simply not
 * granted).
 */
export function callerSource(principal: Principal, asked: CallerSource | undefined): CallerSource {
  if (principal.kind === 'keyless') return 'widget';
  // Only Parley's own scenario runs (src/scenarios) ask for `test`: no route's schema admits it.
  if (asked === 'test') return 'test';
  if (principal.kind === 'api_key') return 'api';
  return asked === 'playground' ? 'playground' : 'api';
}
