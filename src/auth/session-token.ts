import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Dashboard session cookies: `<token>.<mac>`. The token is 32 random bytes (base64url); the database keeps
 * only its SHA-256. The MAC (HMAC-SHA256 with SECRET_KEY) lets an instance refuse a forged or
 * mangled cookie without a database lookup; the server-side row is what makes a session valid and revocable.
 */
export const SESSION_COOKIE = 'parley_session';

function macOf(token: string, secretKey: string): string {
  return createHmac('sha256', secretKey).update(`session:${token}`).digest('base64url');
}

export function newSessionToken(secretKey: string): { cookieValue: string; sha256: string } {
  const token = randomBytes(32).toString('base64url');
  return { cookieValue: `${token}.${macOf(token, secretKey)}`, sha256: hashToken(token) };
}

/** The token's SHA-256 when the cookie value is well formed and its MAC verifies; null otherwise. */
export function verifySessionCookie(value: string, secretKey: string): string | null {
  const dot = value.indexOf('.');
  if (dot <= 0 || value.length > 200) return null;
  const token = value.slice(0, dot);
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  // Compare the MAC as text, not decoded: base64url's last character carries unused bits, so a decode-and-compare
  // would accept a cookie whose final character was altered (a test flipped it and, 3 times in 64, got a 200).
  const given = Buffer.from(value.slice(dot + 1), 'utf8');
  const expected = Buffer.from(macOf(token, secretKey), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return hashToken(token);
}

function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Reads one cookie from a Cookie header (RFC 6265 pairs separated by "; "). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  secure: boolean;
  maxAgeSeconds: number;
}

/** HttpOnly, SameSite=Lax, Path=/; Secure outside local development. */
export function sessionCookie(value: string, options: CookieOptions): string {
  const parts = [
    `${SESSION_COOKIE}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', { secure, maxAgeSeconds: 0 });
}
