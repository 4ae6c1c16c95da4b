/**
 * Identity and access: users, accounts, dashboard sessions, scoped API keys, per-key rate limits and the
 * authenticators every route family uses (`bearer`, `bearer-or-keyless`, `session`, `admin`).
 */
export { createAuthenticators } from './authenticators.js';
export { identityRoutes } from './routes.js';
export { createUser, createApiKey, setAccountStatus, markAccountKeysStale, findUserByEmail } from './service.js';
export {
  SCOPES,
  principalOf,
  ownerOf,
  callerSource,
  type Principal,
  type OwnerPrincipal,
  type Scope,
} from './principal.js';
export { type AccountStatus } from './types.js';
export { isWellFormedSecret } from './api-key-secret.js';
export { emailSchema } from './validation.js';
