import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config/index.js';
import type { SharedStore } from '../store/types.js';
import { widgetErrors } from './errors.js';

/** What the policy needs of an assistant (a subset of assistants' `Assistant`). */
export interface PolicyAssistant {
  id: string;
  publicId: string;
  settings: {
    allowedDomains: readonly string[];
    visitorRateLimitPerMinute: number | null;
    assistantRateLimitPerMinute: number | null;
    requireWidgetSigning: boolean;
  };
}

export interface PolicyRequest {
  headers: Readonly<Record<string, string>>;
  ip: string;
}

export interface AdmitOptions {
  /** Check the visitor signature when the assistant requires it (chat, feedback, voice mint). Default true. */
  signature?: boolean;
}

/**
 * The assistant's security policy for keyless callers, in a fixed order (docs/api.md, Authentication):
 * Origin allowlist -> per-visitor and per-assistant rate limits -> signed visitor identity (when required).
 * Buckets live in the shared store, so every instance of a deployment counts together; chat, feedback,
 * config, sign and voice mint share them.
 */
export interface WidgetPolicy {
  admit(
    request: PolicyRequest,
    assistant: PolicyAssistant,
    visitorId: string | null,
    options?: AdmitOptions,
  ): Promise<void>;
  /** Origin only. */
  checkOrigin(request: PolicyRequest, assistant: PolicyAssistant): void;
  /** A signature for `publicId:visitorId:timestamp` (POST /api/v1/widget/sign). */
  sign(publicId: string, visitorId: string, nowMs?: number): { timestamp: number; signature: string };
}

const PERIOD_MS = 60_000;

/** `https://shop.example` exactly, or `https://*.example.com` for any subdomain (not the apex); scheme and port must match. */
export function isOriginAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined || origin === '' || origin === 'null') return false;
  let parsed: URL;
  try {
    parsed = new URL(origin.toLowerCase());
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  const normalized = `${parsed.protocol}//${parsed.host}`;
  for (const entry of allowed) {
    if (entry === normalized) return true;
    const star = entry.indexOf('://*.');
    if (star === -1) continue;
    const scheme = entry.slice(0, star + 3);
    const suffix = entry.slice(star + 4); // ".example.com[:port]"
    if (
      normalized.startsWith(scheme) &&
      normalized.endsWith(suffix) &&
      normalized.length > scheme.length + suffix.length
    ) {
      // The part before the suffix is a host label sequence, never containing the scheme's slashes or a port.
      const label = normalized.slice(scheme.length, normalized.length - suffix.length);
      if (/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(label)) return true;
    }
  }
  return false;
}

function hmac(secret: string, publicId: string, visitorId: string, timestamp: number): Buffer {
  return createHmac('sha256', secret).update(`${publicId}:${visitorId}:${timestamp}`).digest();
}

/** `t=<unix>,v1=<hex HMAC-SHA256(SECRET_KEY, publicId:visitorId:t)>`, within the allowed skew; constant-time compare. */
export function isSignatureValid(
  secret: string,
  header: string | undefined,
  publicId: string,
  visitorId: string,
  nowMs: number,
  maxSkewSeconds: number,
): boolean {
  if (header === undefined) return false;
  const match = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header.trim());
  if (!match) return false;
  const timestamp = Number(match[1]);
  if (Math.abs(nowMs / 1000 - timestamp) > maxSkewSeconds) return false;
  return timingSafeEqual(Buffer.from(match[2]!, 'hex'), hmac(secret, publicId, visitorId, timestamp));
}

export function createWidgetPolicy(deps: {
  config: Pick<
    Config,
    | 'secretKey'
    | 'WIDGET_RATE_LIMIT_PER_VISITOR_PER_MINUTE'
    | 'WIDGET_RATE_LIMIT_PER_ASSISTANT_PER_MINUTE'
    | 'WIDGET_SIGNING_MAX_SKEW_SECONDS'
  >;
  store: SharedStore;
  now?: () => number;
}): WidgetPolicy {
  const { config, store } = deps;
  const now = deps.now ?? Date.now;
  const checkOrigin = (request: PolicyRequest, assistant: PolicyAssistant): void => {
    if (!isOriginAllowed(request.headers['origin'], assistant.settings.allowedDomains))
      throw widgetErrors.originNotAllowed();
  };
  return {
    checkOrigin,
    async admit(request, assistant, visitorId, options = {}) {
      checkOrigin(request, assistant);
      const visitorLimit =
        assistant.settings.visitorRateLimitPerMinute ?? config.WIDGET_RATE_LIMIT_PER_VISITOR_PER_MINUTE;
      const assistantLimit =
        assistant.settings.assistantRateLimitPerMinute ?? config.WIDGET_RATE_LIMIT_PER_ASSISTANT_PER_MINUTE;
      const who = visitorId ?? `ip:${request.ip}`;
      const visitor = await store.rateLimit(`widget:rl:visitor:${assistant.id}:${who}`, visitorLimit, PERIOD_MS);
      if (!visitor.allowed) throw widgetErrors.rateLimited(visitor.retryAfterMs);
      const whole = await store.rateLimit(`widget:rl:assistant:${assistant.id}`, assistantLimit, PERIOD_MS);
      if (!whole.allowed) throw widgetErrors.rateLimited(whole.retryAfterMs);
      if ((options.signature ?? true) && assistant.settings.requireWidgetSigning) {
        const header = request.headers['x-parley-signature'];
        if (visitorId === null || header === undefined) throw widgetErrors.signatureRequired();
        if (
          !isSignatureValid(
            config.secretKey,
            header,
            assistant.publicId,
            visitorId,
            now(),
            config.WIDGET_SIGNING_MAX_SKEW_SECONDS,
          )
        ) {
          throw widgetErrors.signatureInvalid();
        }
      }
    },
    sign(publicId, visitorId, nowMs = now()) {
      const timestamp = Math.floor(nowMs / 1000);
      return {
        timestamp,
        signature: `t=${timestamp},v1=${hmac(config.secretKey, publicId, visitorId, timestamp).toString('hex')}`,
      };
    },
  };
}
