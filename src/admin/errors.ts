import { AppError } from '../errors/index.js';

/** The operator capability's error codes. The gate itself answers AUTH_SESSION_REQUIRED (401) / AUTH_NOT_ADMIN (403). */
export const AdminErrorCodes = {
  /** 404: no hosting account with this account id. */
  ACCOUNT_NOT_FOUND: 'ADMIN_ACCOUNT_NOT_FOUND',
  /** 404: no plan_entitlements row with this plan code. */
  PLAN_NOT_FOUND: 'ADMIN_PLAN_NOT_FOUND',
} as const;

export const adminErrors = {
  accountNotFound: () => new AppError(AdminErrorCodes.ACCOUNT_NOT_FOUND, 404, 'No such account.'),
  planNotFound: () => new AppError(AdminErrorCodes.PLAN_NOT_FOUND, 404, 'No such plan.'),
};
