/**
 * The one error type capabilities throw on purpose. The HTTP shell maps it to the one error body
 * (`error`, `code`, `reason?`, `details?`, `requestId`); anything else is a 500.
 */
export interface AppErrorOptions {
  /** A reason value the contract names (voice_unavailable, misrouted, ...). Absent for plain errors. */
  reason?: string;
  /** Structured, safe-to-show details (validation issues, limits for owners). */
  details?: unknown;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly reason: string | undefined;
  readonly details: unknown;
  readonly headers: Record<string, string> | undefined;

  constructor(code: string, status: number, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.reason = options.reason;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
