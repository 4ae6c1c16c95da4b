import { createHmac, timingSafeEqual } from 'node:crypto';

/** A signature is HMAC-SHA256, base64url without padding: 43 characters. */
export const SIGNATURE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Signs and checks credential-free recording links: `?expires=<unix seconds>&signature=<hmac>` over the session id
 * and the expiry, with a key derived from SECRET_KEY for this one purpose (a link's signature opens nothing else,
 * and no other token of the server opens a recording). Checked in constant time (docs/house-rules.md rule 19).
 */
export class RecordingLinkSigner {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = createHmac('sha256', secretKey).update('parley recording link v1').digest();
  }

  signature(sessionId: string, expiresAtSeconds: number): string {
    return createHmac('sha256', this.key).update(`${sessionId}\n${expiresAtSeconds}`).digest('base64url');
  }

  /** `path?expires=..&signature=..` for a link to `sessionId` that works until `expiresAtSeconds`. */
  query(sessionId: string, expiresAtSeconds: number): string {
    return `expires=${expiresAtSeconds}&signature=${this.signature(sessionId, expiresAtSeconds)}`;
  }

  /** 'ok', 'expired' (a genuine link past its expiry) or 'invalid' (altered: id, expiry or signature). */
  verify(sessionId: string, expiresAtSeconds: number, signature: string, nowMs: number): 'ok' | 'expired' | 'invalid' {
    if (!SIGNATURE_PATTERN.test(signature)) return 'invalid';
    const expected = Buffer.from(this.signature(sessionId, expiresAtSeconds), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return expiresAtSeconds * 1000 <= nowMs ? 'expired' : 'ok';
  }
}

/** The path a signed link opens (the query comes from {@link RecordingLinkSigner.query}). */
export const signedRecordingPath = (sessionId: string) => `/api/v1/recordings/${sessionId}`;
