/**
 * Billing through Polar (merchant of record): owner checkout / portal / overview routes and the inbound webhook
 * that syncs plan and billing period onto the hosting account.
 */
export { billingRoutes } from './routes.js';
export {
  receiveWebhook,
  startCheckout,
  openPortal,
  billingOverview,
  productIdFor,
  planForProduct,
  polarBaseUrl,
  type BillingDeps,
  type BillingConfig,
  type WebhookOutcome,
} from './service.js';
export { PolarClient, POLAR_API_BASES } from './polar-client.js';
export {
  verifyWebhook,
  signWebhook,
  signingKeys,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookHeaders,
} from './webhook-signature.js';
export { derivePlan, SUBSCRIPTION_EVENTS, type SubscriptionState } from './subscriptions.js';
export { BillingErrorCodes, billingErrors } from './errors.js';
