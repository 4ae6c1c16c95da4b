import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import type { SharedStore } from '../store/types.js';
import { widgetErrors } from './errors.js';
import { findSecretGeneration } from './queries.js';

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
  /**
   * A signature for `publicId:visitorId:timestamp` (POST /api/v1/widget/sign). Only for a visitor id Parley generated
   * itself ({@link newVisitorId}) or one whose previous signature {@link verifyPrevious} accepted: never for an id a
   * caller merely chose, or knowing someone's visitor id would be enough to act as them.
   */
  sign(publicId: string, visitorId: string, nowMs?: number): { timestamp: number; signature: string };
  /**
   * Whether `header` is a signature of this visitor id by Parley or by the assistant's widget secret, issued at most
   * `maxAgeSeconds` ago (the renewal window; in the future only within the allowed skew).
   */
  verifyPrevious(
    header: string | undefined,
    assistant: PolicyAssistant,
    visitorId: string,
    maxAgeSeconds: number,
  ): Promise<boolean>;
  /** The widget secret of an assistant at a generation (derived from SECRET_KEY; never stored). */
  widgetSecret(assistantId: string, generation: number): string;
}

/** A visitor id Parley makes up itself: `v_` and 32 hex digits. */
export function newVisitorId(): string {
  return `v_${randomBytes(16).toString('hex')}`;
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
  // The secret's UTF-8 bytes are the key, for SECRET_KEY and for an owner's widget secret alike.
  return createHmac('sha256', secret).update(`${publicId}:${visitorId}:${timestamp}`).digest();
}

/**
 * `t=<unix>,v1=<hex HMAC-SHA256(secret, publicId:visitorId:t)>`, issued within the allowed skew (or up to
 * `maxAgeSeconds` ago when given); constant-time compare. The secret is SECRET_KEY, or an assistant's widget secret.
 */
export function isSignatureValid(
  secret: string,
  header: string | undefined,
  publicId: string,
  visitorId: string,
  nowMs: number,
  maxSkewSeconds: number,
  maxAgeSeconds = maxSkewSeconds,
): boolean {
  if (header === undefined) return false;
  const match = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header.trim());
  if (!match) return false;
  const timestamp = Number(match[1]);
  const age = nowMs / 1000 - timestamp;
  if (age > Math.max(maxAgeSeconds, maxSkewSeconds) || -age > maxSkewSeconds) return false;
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
  /** Where widget secret generations are read; without it only Parley's own signatures are accepted. */
  sql?: Sql;
  now?: () => number;
}): WidgetPolicy {
  const { config, store } = deps;
  const now = deps.now ?? Date.now;
  const widgetSecret = (assistantId: string, generation: number) =>
    `wsec_${createHmac('sha256', config.secretKey).update(`parley-widget-secret:${assistantId}:${generation}`).digest('base64url')}`;
  /** Parley's signature, else (one lookup, only then) the owner's, made with the assistant's widget secret. */
  const signatureMatches = async (
    header: string,
    assistant: PolicyAssistant,
    visitorId: string,
    maxAgeSeconds: number,
  ): Promise<boolean> => {
    const skew = config.WIDGET_SIGNING_MAX_SKEW_SECONDS;
    const at = now();
    if (isSignatureValid(config.secretKey, header, assistant.publicId, visitorId, at, skew, maxAgeSeconds)) return true;
    if (deps.sql === undefined) return false;
    const generation = await findSecretGeneration(deps.sql, assistant.id);
    if (generation === undefined) return false;
    const ownerSecret = widgetSecret(assistant.id, generation);
    return isSignatureValid(ownerSecret, header, assistant.publicId, visitorId, at, skew, maxAgeSeconds);
  };
  const checkOrigin = (request: PolicyRequest, assistant: PolicyAssistant): void => {
    if (!isOriginAllowed(request.headers['origin'], assistant.settings.allowedDomains))
      throw widgetErrors.originNotAllowed(request.headers['origin']);
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
        if (!(await signatureMatches(header, assistant, visitorId, config.WIDGET_SIGNING_MAX_SKEW_SECONDS)))
          throw widgetErrors.signatureInvalid();
      }
    },
    sign(publicId, visitorId, nowMs = now()) {
      const timestamp = Math.floor(nowMs / 1000);
      return {
        timestamp,
        signature: `t=${timestamp},v1=${hmac(config.secretKey, publicId, visitorId, timestamp).toString('hex')}`,
      };
    },
    async verifyPrevious(header, assistant, visitorId, maxAgeSeconds) {
      return header !== undefined && signatureMatches(header, assistant, visitorId, maxAgeSeconds);
    },
    widgetSecret,
  };
}
