/**
 * The one error every SDK call throws for a non-2xx answer (and for a network failure, with status 0).
 * Parley answers every error with one body: `{ error, code, reason?, details?, requestId }` (docs/api.md, Errors).
 */
export class ParleyError extends Error {
  override readonly name = 'ParleyError';
  /** HTTP status; 0 when no answer arrived (network failure, aborted). */
  readonly status: number;
  /** Stable, documented code, e.g. `VALIDATION_FAILED`, `VOICE_CLIENT_UPDATE_REQUIRED`; `NETWORK_ERROR` for status 0. */
  readonly code: string;
  /** Present only where the contract names a reason: `voice_unavailable`, `voice_concurrency_limit`, `client_update_required`, ... */
  readonly reason: string | undefined;
  /** The request id to quote when reporting a problem (from the body, else the X-Request-Id header). */
  readonly requestId: string | undefined;
  readonly details: unknown;
  /** Milliseconds the server asked to wait (Retry-After), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    reason?: string | undefined;
    requestId?: string | undefined;
    details?: unknown;
    retryAfterMs?: number | undefined;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.reason = init.reason;
    this.requestId = init.requestId;
    this.details = init.details;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** A refusal by the request rate limit (plain 429, no reason). */
  get isRateLimited(): boolean {
    return this.status === 429 && this.reason === undefined;
  }
}

/**
 * Retry-After as milliseconds: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). Undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Builds the ParleyError of an answer whose body has already been read as text. */
export function errorFromAnswer(status: number, headers: Headers, text: string): ParleyError {
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = text === '' ? undefined : JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's HTML page): the status says what we know.
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return new ParleyError({
    status,
    code: str(body?.['code']) ?? `HTTP_${status}`,
    message: str(body?.['error']) ?? (text.slice(0, 200) || `HTTP ${status}`),
    reason: str(body?.['reason']),
    requestId: str(body?.['requestId']) ?? headers.get('x-request-id') ?? undefined,
    details: body?.['details'],
    retryAfterMs: parseRetryAfter(headers.get('retry-after')),
  });
}

/** A failure before any answer (DNS, refused connection, abort). */
export function networkError(cause: unknown): ParleyError {
  const aborted = cause instanceof Error && (cause.name === 'AbortError' || cause.name === 'TimeoutError');
  return new ParleyError({
    status: 0,
    code: aborted ? 'ABORTED' : 'NETWORK_ERROR',
    message: cause instanceof Error ? cause.message : String(cause),
    cause,
  });
}
