import { createHmac, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks: a delivery is accepted only within this many seconds of its webhook-timestamp. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export interface WebhookHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

export type VerifyResult =
  { ok: true } | { ok: false; why: 'missing_headers' | 'bad_timestamp' | 'stale' | 'no_match' };

/**
 * The HMAC keys a secret may mean (docs/design-decisions.md, Admin and billing): the Standard Webhooks key is the
 * base64 after `whsec_`; older Polar secrets sign with the raw bytes of the whole secret string. Both are tried.
 */
export function signingKeys(secret: string): Buffer[] {
  const keys: Buffer[] = [];
  if (secret.startsWith('whsec_')) {
    const decoded = Buffer.from(secret.slice('whsec_'.length), 'base64');
    if (decoded.length > 0) keys.push(decoded);
  }
  keys.push(Buffer.from(secret, 'utf8'));
  return keys;
}

/** The `v1,<base64>` signature of one delivery (what the provider, and the test simulator, send). */
export function signWebhook(key: Buffer, id: string, timestamp: string, body: Buffer | string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/**
 * Verifies a Standard Webhooks delivery over the exact bytes received: webhook-id, webhook-timestamp within
 * ±300 s of `nowMs`, and at least one `v1,` entry of the space-separated webhook-signature matching
 * HMAC-SHA256(key, "id.timestamp.body"), compared in constant time. Other versions are ignored.
 */
export function verifyWebhook(headers: WebhookHeaders, body: Buffer, secret: string, nowMs: number): VerifyResult {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return { ok: false, why: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, why: 'bad_timestamp' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) return { ok: false, why: 'stale' };
  const offered = signature
    .split(' ')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3), 'base64'));
  if (offered.length === 0) return { ok: false, why: 'no_match' };
  for (const key of signingKeys(secret)) {
    const expected = Buffer.from(signWebhook(key, id, timestamp, body).slice(3), 'base64');
    for (const candidate of offered) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) return { ok: true };
    }
  }
  return { ok: false, why: 'no_match' };
}
