import { AppError } from '../errors/index.js';

/** The operator capability's error codes. The gate itself answers AUTH_SESSION_REQUIRED (401) / AUTH_NOT_ADMIN (403). */
export const AdminErrorCodes = {
  /** 404: no hosting account with this account id. */
  ACCOUNT_NOT_FOUND: 'ADMIN_ACCOUNT_NOT_FOUND',
  /** 404: no plan_entitlements row with this plan code. */
  PLAN_NOT_FOUND: 'ADMIN_PLAN_NOT_FOUND',
  /** 404: no user with this id or email (granting or revoking operator rights). */
  USER_NOT_FOUND: 'ADMIN_USER_NOT_FOUND',
  /** 409: the user is an operator through ADMIN_USER_IDS, which only a change of that setting revokes. */
  OPERATOR_FROM_CONFIG: 'ADMIN_OPERATOR_FROM_CONFIG',
} as const;

export const adminErrors = {
  accountNotFound: () => new AppError(AdminErrorCodes.ACCOUNT_NOT_FOUND, 404, 'No such account.'),
  planNotFound: () => new AppError(AdminErrorCodes.PLAN_NOT_FOUND, 404, 'No such plan.'),
  userNotFound: () => new AppError(AdminErrorCodes.USER_NOT_FOUND, 404, 'No such user.'),
  operatorFromConfig: () =>
    new AppError(
      AdminErrorCodes.OPERATOR_FROM_CONFIG,
      409,
      'This user is an operator through ADMIN_USER_IDS; remove the id there (and restart) to revoke it.',
    ),
};
