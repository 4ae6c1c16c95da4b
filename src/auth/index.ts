/**
 * Identity and access: users, accounts, dashboard sessions, scoped API keys, per-key rate limits and the
 * authenticators every route family uses (`bearer`, `bearer-or-keyless`, `session`, `admin`).
 */
export { createAuthenticators } from './authenticators.js';
export { identityRoutes } from './routes.js';
export {
  createUser,
  createApiKey,
  revokeApiKey,
  listApiKeys,
  setAccountStatus,
  markAccountKeysStale,
  findUserByEmail,
  MAX_ACTIVE_KEYS,
  type ApiKeyView,
  type AuditActor,
  type CreatedApiKey,
  type CreatedUser,
} from './service.js';
export { AuthErrorCodes, authErrors, type AuthErrorCode } from './errors.js';
export {
  SCOPES,
  principalOf,
  ownerOf,
  callerSource,
  type CallerSource,
  type Principal,
  type OwnerPrincipal,
  type Scope,
} from './principal.js';
export { ACCOUNT_STATUSES, type AccountStatus, type IdentityDeps } from './types.js';
export { SESSION_COOKIE } from './session-token.js';
export { isWellFormedSecret, SECRET_PREFIX } from './api-key-secret.js';
export { emailSchema, newPasswordSchema, displayNameSchema, scopesSchema } from './validation.js';
