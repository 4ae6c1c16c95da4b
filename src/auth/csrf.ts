import type { RequestContext } from '../http/index.js';

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isMutation(method: string): boolean {
  return MUTATIONS.has(method);
}

/**
 * CSRF defence for cookie-authenticated mutations (OWASP: verify the source origin). The request's Origin
 * (else the Referer's origin) must be the dashboard's: PUBLIC_URL's origin when configured, else the Host the
 * request was sent to. A request with neither header is refused: browsers send Origin on every POST/PUT/
 * PATCH/DELETE, so only a non-browser client could lack it, and it can set the header. SameSite=Lax on the
 * cookie is the second layer.
 */
export function isSameOrigin(ctx: Pick<RequestContext, 'headers'>, publicUrl: string | undefined): boolean {
  const source = ctx.headers['origin'] ?? ctx.headers['referer'];
  if (source === undefined || source === 'null') return false;
  let parsed: URL;
  try {
    parsed = new URL(source);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  if (publicUrl !== undefined) return parsed.origin === new URL(publicUrl).origin;
  const host = ctx.headers['host'];
  return host !== undefined && parsed.host === host.toLowerCase();
}

/** For routes without a session (login, signup): a cross-origin Origin is refused; an absent one is allowed. */
export function isCrossOrigin(ctx: Pick<RequestContext, 'headers'>, publicUrl: string | undefined): boolean {
  if (ctx.headers['origin'] === undefined && ctx.headers['referer'] === undefined) return false;
  return !isSameOrigin(ctx, publicUrl);
}
