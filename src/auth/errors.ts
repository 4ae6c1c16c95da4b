import { AppError, HttpErrorCodes } from '../errors/index.js';

/**
 * The identity capability's error codes (docs/api.md, Error codes). Stable: clients and docs depend on them.
 * Rate-limit refusals use the shell's RATE_LIMITED and never carry a `reason` (a plain 429: docs/api.md, Rate limits).
 */
export const AuthErrorCodes = {
  /** 401: a route needing an owner was called without a key or session. */
  REQUIRED: 'AUTH_REQUIRED',
  /** 401: no Authorization header on a bearer route. */
  MISSING_KEY: 'AUTH_MISSING_KEY',
  /** 401: the Authorization header is not `Bearer sk_live_...`, the checksum fails, or no such key. */
  INVALID_KEY: 'AUTH_INVALID_KEY',
  /** 401: the key was revoked. */
  KEY_REVOKED: 'AUTH_KEY_REVOKED',
  /** 403: the key is valid but lacks the route's scope. */
  MISSING_SCOPE: 'AUTH_MISSING_SCOPE',
  /** 403: the key's (or session's) account is suspended. */
  ACCOUNT_SUSPENDED: 'AUTH_ACCOUNT_SUSPENDED',
  /** 403: the account is disabled. */
  ACCOUNT_DISABLED: 'AUTH_ACCOUNT_DISABLED',
  /** 401: wrong email or password (never says which). */
  INVALID_CREDENTIALS: 'AUTH_INVALID_CREDENTIALS',
  /** 401: no valid dashboard session (absent, expired, revoked or forged cookie). */
  SESSION_REQUIRED: 'AUTH_SESSION_REQUIRED',
  /** 403: a cookie-authenticated mutation from another origin (or without Origin/Referer). */
  CSRF: 'AUTH_CSRF',
  /** 403: signed in, but not an operator (neither in ADMIN_USER_IDS nor granted). */
  NOT_ADMIN: 'AUTH_NOT_ADMIN',
  /** 409: signup or user:create with an email already registered. */
  EMAIL_TAKEN: 'AUTH_EMAIL_TAKEN',
  /** 404: no such key in this account. */
  KEY_NOT_FOUND: 'AUTH_KEY_NOT_FOUND',
  /** 409: the account has the maximum number of active keys. */
  KEY_LIMIT: 'AUTH_KEY_LIMIT',
  /** 404: no such account. */
  ACCOUNT_NOT_FOUND: 'AUTH_ACCOUNT_NOT_FOUND',
  /** CLI: no user with that email. */
  USER_NOT_FOUND: 'AUTH_USER_NOT_FOUND',
  /** 429: request rate limit (per key, or login attempts). Plain: no reason. */
  RATE_LIMITED: HttpErrorCodes.RATE_LIMITED,
} as const;

export type AuthErrorCode = (typeof AuthErrorCodes)[keyof typeof AuthErrorCodes];

export const authErrors = {
  missingKey: () => new AppError(AuthErrorCodes.MISSING_KEY, 401, 'Send an API key: Authorization: Bearer sk_live_...'),
  invalidKey: () => new AppError(AuthErrorCodes.INVALID_KEY, 401, 'The API key is not valid.'),
  keyRevoked: () => new AppError(AuthErrorCodes.KEY_REVOKED, 401, 'The API key was revoked.'),
  missingScope: (scope: string) =>
    new AppError(AuthErrorCodes.MISSING_SCOPE, 403, `The API key lacks the "${scope}" scope.`, {
      details: { requiredScope: scope },
    }),
  accountSuspended: () => new AppError(AuthErrorCodes.ACCOUNT_SUSPENDED, 403, 'The account is suspended.'),
  accountDisabled: () => new AppError(AuthErrorCodes.ACCOUNT_DISABLED, 403, 'The account is disabled.'),
  invalidCredentials: () =>
    new AppError(AuthErrorCodes.INVALID_CREDENTIALS, 401, 'The email or password is not correct.'),
  sessionRequired: () => new AppError(AuthErrorCodes.SESSION_REQUIRED, 401, 'Sign in first.'),
  csrf: () =>
    new AppError(AuthErrorCodes.CSRF, 403, 'This request did not come from the dashboard (Origin check failed).'),
  notAdmin: () => new AppError(AuthErrorCodes.NOT_ADMIN, 403, 'This needs an operator account.'),
  emailTaken: () => new AppError(AuthErrorCodes.EMAIL_TAKEN, 409, 'A user with this email already exists.'),
  keyNotFound: () => new AppError(AuthErrorCodes.KEY_NOT_FOUND, 404, 'No such API key in this account.'),
  keyLimit: (max: number) =>
    new AppError(
      AuthErrorCodes.KEY_LIMIT,
      409,
      `An account can hold at most ${max} active API keys; revoke one first.`,
      { details: { max } },
    ),
  accountNotFound: () => new AppError(AuthErrorCodes.ACCOUNT_NOT_FOUND, 404, 'No such account.'),
  userNotFound: () => new AppError(AuthErrorCodes.USER_NOT_FOUND, 404, 'No user with this email.'),
  /** A plain 429 (no reason); Retry-After in whole seconds, rounded up so it is never early. */
  rateLimited: (retryAfterMs: number, headers: Record<string, string> = {}) =>
    new AppError(AuthErrorCodes.RATE_LIMITED, 429, 'Too many requests; retry after the time in Retry-After.', {
      headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    }),
};
