import type { RequestContext } from '../http/index.js';

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isMutation(method: string): boolean {
  return MUTATIONS.has(method);
}

/**
 * CSRF defence for cookie-authenticated mutations (OWASP: verify the source origin). The request's Origin
 * (else the Referer's origin) must be the dashboard's origin, scheme, host and port alike: PUBLIC_URL's origin when
 * configured, else the scheme the request arrived on (plain HTTP; `X-Forwarded-Proto` when TRUST_PROXY) with the
 * Host it was sent to. A request with neither header is refused: browsers send Origin on every POST/PUT/PATCH/DELETE,
 * so only a non-browser client could lack it, and it can set the header. SameSite=Lax on the cookie is the second
 * layer.
 */
export function isSameOrigin(
  ctx: Pick<RequestContext, 'headers'>,
  publicUrl: string | undefined,
  trustProxy = false,
): boolean {
  const source = originOf(ctx.headers['origin'] ?? ctx.headers['referer']);
  const expected = publicUrl !== undefined ? new URL(publicUrl).origin : requestOrigin(ctx, trustProxy);
  return source !== undefined && expected !== undefined && source === expected;
}

/** The origin (scheme://host[:port], default ports dropped) of an http(s) URL; undefined for anything else. */
function originOf(value: string | undefined): string | undefined {
  if (value === undefined || value === 'null') return undefined;
  try {
    const parsed = new URL(value);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The origin this request was sent to: its scheme (the proxy's, when trusted) and its Host header. */
function requestOrigin(ctx: Pick<RequestContext, 'headers'>, trustProxy: boolean): string | undefined {
  const host = ctx.headers['host'];
  if (host === undefined || host === '' || /[/?#@\\\s]/.test(host)) return undefined;
  // The first hop's answer when a chain of proxies appended theirs.
  const forwarded = trustProxy ? ctx.headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase() : undefined;
  const scheme = forwarded === 'https' || forwarded === 'http' ? forwarded : 'http';
  return originOf(`${scheme}://${host}`);
}

/** For routes without a session (login, signup): a cross-origin Origin is refused; an absent one is allowed. */
export function isCrossOrigin(
  ctx: Pick<RequestContext, 'headers'>,
  publicUrl: string | undefined,
  trustProxy = false,
): boolean {
  if (ctx.headers['origin'] === undefined && ctx.headers['referer'] === undefined) return false;
  return !isSameOrigin(ctx, publicUrl, trustProxy);
}
