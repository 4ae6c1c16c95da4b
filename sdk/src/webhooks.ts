/**
 * Parley's webhook events and a receiver-side check of their Standard Webhooks signature. Depends on nothing but
 * WebCrypto (`globalThis.crypto.subtle`: Node 20, browsers, edge runtimes).
 *
 *   import { verifyWebhook } from '@parley/sdk';
 *   const event = await verifyWebhook(process.env.PARLEY_WEBHOOK_SECRET!, req.headers, rawBody);
 *   if (event.type === 'voice.session.ended') console.log(event.data.billableSeconds);
 */

import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

/**
 * Every event Parley sends (the JSON body of a webhook request), from the contract's `webhooks` section; narrow it
 * by `type`. Payloads never carry transcripts or secrets.
 */
export type ParleyWebhookEvent =
  | Schemas['WebhookEventVoiceSessionStarted']
  | Schemas['WebhookEventVoiceSessionEnded']
  | Schemas['WebhookEventDocumentProcessed']
  | Schemas['WebhookEventDocumentFailed']
  | Schemas['WebhookEventBudgetThresholdCrossed']
  | Schemas['WebhookEventWebhookTest'];

export type ParleyWebhookEventType = ParleyWebhookEvent['type'];

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** Headers as Node (`req.headers`), fetch (`Headers`) or a plain record give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now (replays outside it are refused). Default 300 s. */
  toleranceSeconds?: number;
  /** The clock, in ms (tests). */
  now?: () => number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? record[Object.keys(record).find((k) => k.toLowerCase() === name) ?? ''];
  return Array.isArray(value) ? value[0] : value;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Checks a webhook request's `webhook-signature` (any `v1,` entry made with `secret`, `whsec_...`) over
 * `{webhook-id}.{webhook-timestamp}.{body}` and that the timestamp is recent, then returns the parsed event.
 * Pass the body exactly as received (the raw string or bytes, not re-serialised JSON). Throws
 * {@link WebhookVerificationError} otherwise. The comparison is WebCrypto's HMAC verify (constant time).
 */
export async function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): Promise<ParleyWebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook headers.');
  const seconds = Number(timestamp);
  const now = (options.now ?? Date.now)() / 1000;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300))
    throw new WebhookVerificationError('The webhook timestamp is too old or too new.');
  let key: Awaited<ReturnType<typeof crypto.subtle.importKey>>;
  try {
    const raw = fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret);
    key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  } catch {
    throw new WebhookVerificationError('The secret is not a whsec_ secret.');
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${text}`);
  for (const entry of signatures.split(' ')) {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) continue;
    let mac: Uint8Array<ArrayBuffer>;
    try {
      mac = fromBase64(signature);
    } catch {
      continue;
    }
    if (await crypto.subtle.verify('HMAC', key, mac, signed)) return JSON.parse(text) as ParleyWebhookEvent;
  }
  throw new WebhookVerificationError('No matching webhook signature.');
}
