import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AnyRoute, RequestContext } from '../../http/index.js';
import { voiceErrors } from '../errors.js';

/**
 * The session controlToken (docs/api.md, authentication): `v1.<expiresAtSeconds>.<mac>` where
 * mac = base64url(HMAC-SHA256(SECRET_KEY, "parley.voice.control.v1:<sessionId>:<expiresAtSeconds>")).
 *
 * It is session-scoped because the session id is inside the MAC and comes from the path, never from the token;
 * it expires; every instance of a deployment shares SECRET_KEY, so any instance can check it (and then answer
 * 421 when the session lives elsewhere). Nothing is stored: a wrong token and an unknown session look the same.
 */
const VERSION = 'v1';
const CONTEXT = 'parley.voice.control.v1';

function mac(secret: string, sessionId: string, expiresAtSeconds: number): Buffer {
  return createHmac('sha256', secret).update(`${CONTEXT}:${sessionId}:${expiresAtSeconds}`).digest();
}

/** A token for one session, valid until `expiresAtMs` (rounded up to the second). */
export function issueControlToken(secret: string, sessionId: string, expiresAtMs: number): string {
  const expiresAtSeconds = Math.ceil(expiresAtMs / 1000);
  return `${VERSION}.${expiresAtSeconds}.${mac(secret, sessionId, expiresAtSeconds).toString('base64url')}`;
}

/**
 * True when `token` was issued for `sessionId` with this secret and has not expired at `nowMs`.
 * The MAC is compared in constant time; malformed tokens fail before any HMAC is computed.
 */
export function verifyControlToken(secret: string, token: string, sessionId: string, nowMs: number): boolean {
  if (token.length > 128) return false;
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION || !/^\d{1,12}$/.test(parts[1]!)) return false;
  const expiresAtSeconds = Number(parts[1]);
  if (expiresAtSeconds * 1000 <= nowMs) return false;
  // Compared as text: base64url's last character carries unused bits, so decoding first would accept an altered token.
  const given = Buffer.from(parts[2]!, 'utf8');
  const expected = Buffer.from(mac(secret, sessionId, expiresAtSeconds).toString('base64url'), 'utf8');
  if (given.length !== expected.length) return false;
  return timingSafeEqual(given, expected);
}

/** What a control-token route's authenticator resolves: the session its token opens. */
export interface ControlTokenPrincipal {
  kind: 'control-token';
  sessionId: string;
}

/**
 * The `control-token` authenticator: the body's `token` must open the path's session (a wrong, expired or missing
 * token is the same 404 as an unknown session). It reads the body, so it runs after the body is parsed
 * ({@link guardControlTokenRoutes}).
 */
export function controlTokenAuthenticator(
  secret: string,
): (ctx: Pick<RequestContext, 'params' | 'body'>) => ControlTokenPrincipal {
  return (ctx) => {
    const sessionId = (ctx.params as { sessionId?: string } | undefined)?.sessionId ?? '';
    const token = (ctx.body as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || !verifyControlToken(secret, token, sessionId, Date.now()))
      throw voiceErrors.notFound();
    return { kind: 'control-token', sessionId };
  };
}

/**
 * Every `control-token` route authenticates after its body is read and before its handler runs, whatever the
 * handler does: a route is protected by being declared so, never by its handler remembering to check.
 */
export function guardControlTokenRoutes(routes: AnyRoute[]): AnyRoute[] {
  return routes.map((route) =>
    route.auth !== 'control-token'
      ? route
      : {
          ...route,
          deferAuth: true,
          handler: async (ctx: Parameters<AnyRoute['handler']>[0]) => {
            await ctx.authenticate();
            return route.handler(ctx);
          },
        },
  );
}
