import { createHmac, timingSafeEqual } from 'node:crypto';

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
