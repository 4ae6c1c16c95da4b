import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks 1.0 signing: the secret is `whsec_` + base64 of random bytes (the key is those bytes); the signed
 * content is `{webhook-id}.{webhook-timestamp}.{body}`; `webhook-signature` is a space-separated list of
 * `v1,<base64 HMAC-SHA256>` (one per secret in use, so a rotated secret and its successor both verify).
 */
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: 32 random bytes (the standard asks for 24 to 64). */
export function newEndpointSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` signature. */
export function signV1(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The `webhook-signature` header value for every secret currently signing. */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets.map((secret) => signV1(secret, id, timestampSeconds, body)).join(' ');
}
