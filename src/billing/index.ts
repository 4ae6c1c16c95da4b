/**
 * Billing through Polar (merchant of record): owner checkout / portal / overview routes and the inbound webhook
 * that syncs plan and billing period onto the hosting account.
 */
export { billingRoutes } from './routes.js';
export { polarBaseUrl } from './service.js';
export { verifyWebhook, signWebhook, signingKeys } from './webhook-signature.js';
