import { createHash } from 'node:crypto';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import { validationError } from '../errors/index.js';
import { findUnstorable, isStorableDate, unstorableTextReason } from '../http/index.js';
import type { Logger } from '../log/index.js';
import { PLAN_CODES, type Clock, type PlanCode } from '../metering/index.js';
import { billingErrors } from './errors.js';
import { PolarClient, POLAR_API_BASES } from './polar-client.js';
import * as q from './queries.js';
import { derivePlan, eventSchema, isNewer, isSubscriptionEvent, parseSubscriptionEvent } from './subscriptions.js';
import { verifyWebhook, type WebhookHeaders } from './webhook-signature.js';

export type BillingConfig = Pick<
  Config,
  | 'BILLING_ACCESS_TOKEN'
  | 'BILLING_WEBHOOK_SECRET'
  | 'BILLING_SERVER'
  | 'BILLING_API_BASE_URL'
  | 'BILLING_PRODUCT_ID_STARTER'
  | 'BILLING_PRODUCT_ID_PRO'
  | 'BILLING_PRODUCT_ID_BUSINESS'
  | 'PUBLIC_URL'
>;

export interface BillingDeps {
  sql: Sql;
  config: Readonly<BillingConfig>;
  log: Logger;
  clock: Clock;
}

export type PaidPlan = Exclude<PlanCode, 'free'>;

/** The allowlist: plan code -> the configured product id. Callers never name a product. */
export function productIdFor(config: Readonly<BillingConfig>, plan: PlanCode): string | undefined {
  switch (plan) {
    case 'starter':
      return config.BILLING_PRODUCT_ID_STARTER;
    case 'pro':
      return config.BILLING_PRODUCT_ID_PRO;
    case 'business':
      return config.BILLING_PRODUCT_ID_BUSINESS;
    default:
      return undefined;
  }
}

/** The reverse of the allowlist; an unknown product maps to no plan (it never grants one). */
export function planForProduct(config: Readonly<BillingConfig>, productId: string | null): PlanCode | undefined {
  if (!productId) return undefined;
  return PLAN_CODES.find((plan) => plan !== 'free' && productIdFor(config, plan) === productId);
}

export function polarBaseUrl(config: Readonly<BillingConfig>): string {
  return config.BILLING_API_BASE_URL ?? POLAR_API_BASES[config.BILLING_SERVER];
}

function clientOf(deps: BillingDeps): PolarClient {
  const token = deps.config.BILLING_ACCESS_TOKEN;
  if (!token) throw billingErrors.notConfigured();
  return new PolarClient({ accessToken: token, baseUrl: polarBaseUrl(deps.config) });
}

export interface BillingView {
  server: 'production' | 'sandbox';
  planCode: string;
  periodStart: string;
  periodEnd: string;
  subscription: { id: string; status: string | null; planCode: string | null } | null;
  plans: Array<{ planCode: PaidPlan; available: boolean; current: boolean }>;
}

/** GET /api/v1/account/billing: 503 without BILLING_ACCESS_TOKEN (billing is optional on a deployment). */
export async function billingOverview(deps: BillingDeps, accountId: string): Promise<BillingView> {
  clientOf(deps);
  const h = await q.findHostingBilling(deps.sql, accountId);
  if (!h) throw new Error(`no hosting account for ${accountId}`);
  const paid = PLAN_CODES.filter((p): p is PaidPlan => p !== 'free');
  return {
    server: deps.config.BILLING_SERVER,
    planCode: h.planCode,
    periodStart: h.periodStart.toISOString(),
    periodEnd: h.periodEnd.toISOString(),
    subscription: h.billingSubscriptionId
      ? {
          id: h.billingSubscriptionId,
          status: h.billingSubscriptionStatus,
          planCode: planForProduct(deps.config, h.billingProductId) ?? null,
        }
      : null,
    plans: paid.map((planCode) => ({
      planCode,
      available: productIdFor(deps.config, planCode) !== undefined,
      current: h.planCode === planCode,
    })),
  };
}

/** POST /api/v1/account/billing/checkout: the server picks the product for the plan; answers the hosted URL. */
export async function startCheckout(
  deps: BillingDeps,
  input: { accountId: string; email?: string | undefined; planCode: PlanCode },
  signal?: AbortSignal,
): Promise<{ url: string }> {
  const client = clientOf(deps);
  const productId = productIdFor(deps.config, input.planCode);
  if (!productId) throw billingErrors.planUnavailable(input.planCode);
  const successUrl = deps.config.PUBLIC_URL
    ? `${deps.config.PUBLIC_URL.replace(/\/+$/, '')}/dashboard/billing?checkout={CHECKOUT_ID}`
    : undefined;
  const checkout = await client.createCheckout(
    { productId, accountId: input.accountId, customerEmail: input.email, successUrl },
    signal,
  );
  deps.log.info(
    { accountId: input.accountId, planCode: input.planCode, checkoutId: checkout.id },
    'billing checkout created',
  );
  return { url: checkout.url };
}

/** POST /api/v1/account/billing/portal: a customer portal link for this account's billing customer. */
export async function openPortal(deps: BillingDeps, accountId: string, signal?: AbortSignal): Promise<{ url: string }> {
  const client = clientOf(deps);
  const returnUrl = deps.config.PUBLIC_URL
    ? `${deps.config.PUBLIC_URL.replace(/\/+$/, '')}/dashboard/billing`
    : undefined;
  return client.createPortalSession({ accountId, returnUrl }, signal);
}

export type WebhookOutcome = 'applied' | 'stale' | 'ignored';

/**
 * POST /api/webhooks/polar. Verifies the Standard Webhooks signature over the exact bytes, then, in ONE
 * transaction, claims the webhook-id in idempotency_keys and applies the event: a replay (even days later) finds
 * the claim and changes nothing; a failure rolls the claim back with the change, so the provider's retry is
 * processed afresh (the caller answers 5xx).
 */
export async function receiveWebhook(
  deps: BillingDeps,
  headers: WebhookHeaders,
  rawBody: Buffer,
): Promise<{ replay: boolean; outcome: WebhookOutcome }> {
  const secret = deps.config.BILLING_WEBHOOK_SECRET;
  if (!secret) throw billingErrors.notConfigured('The billing webhook');
  const verdict = verifyWebhook(headers, rawBody, secret, deps.clock.now().getTime());
  if (!verdict.ok) {
    deps.log.warn({ why: verdict.why }, 'billing webhook refused');
    throw billingErrors.badSignature();
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw billingErrors.badEvent();
  }
  // The shell checks JSON bodies it decodes; this raw one is decoded here, whatever its Content-Type said. A NUL or a
  // lone surrogate would fail in PostgreSQL (a 500 the provider retries forever): refused as the bad input it is.
  const issue = findUnstorable(decoded, 'body');
  if (issue) throw validationError([issue], 'body');
  const idReason = unstorableTextReason(headers.id ?? '');
  if (idReason) throw validationError([{ path: 'headers.webhook-id', message: idReason }], 'headers');
  const parsed = eventSchema.safeParse(decoded);
  if (!parsed.success) throw billingErrors.badEvent();
  const event = parsed.data;
  const webhookId = headers.id!;
  const fingerprint = createHash('sha256').update(rawBody).digest('hex');
  const eventTime =
    event.timestamp && isStorableDate(new Date(event.timestamp))
      ? new Date(event.timestamp)
      : new Date(Number(headers.timestamp) * 1000);
  return deps.sql.begin(async (tx) => {
    const earlier = await q.claimWebhook(tx, webhookId, fingerprint);
    if (earlier) {
      const stored = (earlier.response as { outcome?: WebhookOutcome } | null)?.outcome ?? 'applied';
      return { replay: true, outcome: stored };
    }
    const outcome = await applyEvent(deps, tx, event.type, event.data, eventTime);
    await q.recordWebhookOutcome(tx, webhookId, { outcome, type: event.type });
    deps.log.info({ webhookId, type: event.type, outcome }, 'billing webhook processed');
    return { replay: false, outcome };
  });
}

async function applyEvent(
  deps: BillingDeps,
  tx: q.Queryable,
  type: string,
  data: unknown,
  eventTime: Date,
): Promise<WebhookOutcome> {
  if (!isSubscriptionEvent(type)) return 'ignored';
  const parsed = parseSubscriptionEvent(type, data, eventTime);
  if (!parsed || !parsed.accountId) return 'ignored';
  if (!(await q.lockHostingAccount(tx, parsed.accountId))) return 'ignored';
  const stored = await q.findSubscription(tx, parsed.state.id);
  // A subscription stays with the account it was first seen on.
  const accountId = stored?.accountId ?? parsed.accountId;
  if (stored && !isNewer(parsed.state, stored)) {
    // Revocation is terminal and sticky: an out-of-order revoke still revokes, so any delivery order ends alike.
    if (!parsed.state.revoked || stored.revoked) return 'stale';
    await q.upsertSubscription(tx, { ...stored, revoked: true });
  } else {
    await q.upsertSubscription(tx, {
      ...parsed.state,
      accountId,
      revoked: parsed.state.revoked || (stored?.revoked ?? false),
    });
  }
  const derived = derivePlan(await q.listSubscriptions(tx, accountId), (productId) =>
    planForProduct(deps.config, productId),
  );
  await q.applyHostingBilling(tx, accountId, derived);
  return 'applied';
}
