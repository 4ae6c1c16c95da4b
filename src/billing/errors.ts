import { AppError } from '../errors/index.js';

/** The billing capability's error codes. */
export const BillingErrorCodes = {
  /** 503: BILLING_ACCESS_TOKEN is not set (billing is optional: docs/design-decisions.md); or, for the webhook, BILLING_WEBHOOK_SECRET. */
  NOT_CONFIGURED: 'BILLING_NOT_CONFIGURED',
  /** 400: webhook signature headers missing, timestamp outside ±300 s, or no signature matches. */
  BAD_SIGNATURE: 'BILLING_BAD_SIGNATURE',
  /** 400: the webhook body is not a JSON event. */
  BAD_EVENT: 'BILLING_BAD_EVENT',
  /** 400: checkout for a plan that has no product configured (or free). */
  PLAN_UNAVAILABLE: 'BILLING_PLAN_UNAVAILABLE',
  /** 409: the customer portal needs a billing customer; this account has never checked out. */
  NO_CUSTOMER: 'BILLING_NO_CUSTOMER',
  /** 502: the billing provider failed or answered something unexpected. */
  PROVIDER_ERROR: 'BILLING_PROVIDER_ERROR',
} as const;

export const billingErrors = {
  notConfigured: (what = 'Billing') =>
    new AppError(BillingErrorCodes.NOT_CONFIGURED, 503, `${what} is not configured on this server.`),
  badSignature: () => new AppError(BillingErrorCodes.BAD_SIGNATURE, 400, 'The webhook signature is not valid.'),
  badEvent: () => new AppError(BillingErrorCodes.BAD_EVENT, 400, 'The webhook body is not a billing event.'),
  planUnavailable: (planCode: string) =>
    new AppError(BillingErrorCodes.PLAN_UNAVAILABLE, 400, `The plan "${planCode}" cannot be bought here.`, {
      details: { planCode },
    }),
  noCustomer: () =>
    new AppError(
      BillingErrorCodes.NO_CUSTOMER,
      409,
      'There is no billing customer for this account yet; check out a plan first.',
    ),
  providerError: (status?: number) =>
    new AppError(
      BillingErrorCodes.PROVIDER_ERROR,
      502,
      'The billing provider did not answer as expected.',
      status !== undefined ? { details: { providerStatus: status } } : {},
    ),
};
