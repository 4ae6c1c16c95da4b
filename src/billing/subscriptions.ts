import { z } from 'zod';
import { isStorableDate } from '../http/index.js';
import type { PlanCode } from '../metering/index.js';

/** Events that carry a subscription and sync the plan (docs/design-decisions.md, Admin and billing). Others are acknowledged and ignored. */
export const SUBSCRIPTION_EVENTS = {
  'subscription.created': 1,
  'subscription.active': 2,
  'subscription.updated': 2,
  'subscription.uncanceled': 2,
  'subscription.canceled': 3,
  'subscription.revoked': 4,
} as const;
export type SubscriptionEventType = keyof typeof SUBSCRIPTION_EVENTS;

const isoDate = z
  .union([z.string(), z.null()])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === null) return null;
    const d = new Date(v);
    if (!isStorableDate(d)) {
      ctx.addIssue({ code: 'custom', message: 'not a date between years 0001 and 9999' });
      return z.NEVER;
    }
    return d;
  });

const metadata = z.record(z.string(), z.unknown()).nullable().optional();

/** The fields of a Polar subscription Parley reads; everything else is ignored. */
export const subscriptionSchema = z.object({
  id: z.string().min(1),
  status: z.string().min(1),
  current_period_start: isoDate,
  current_period_end: isoDate,
  created_at: isoDate,
  modified_at: isoDate,
  customer_id: z.string().nullable().optional(),
  product_id: z.string().nullable().optional(),
  product: z.object({ id: z.string() }).nullable().optional(),
  metadata,
  customer: z
    .object({ id: z.string().optional(), external_id: z.string().nullable().optional(), metadata })
    .nullable()
    .optional(),
});

export const eventSchema = z.object({ type: z.string().min(1), timestamp: z.string().optional(), data: z.unknown() });

/** One subscription's newest known state, as stored in billing_subscriptions. */
export interface SubscriptionState {
  id: string;
  accountId: string;
  customerId: string | null;
  productId: string | null;
  status: string;
  revoked: boolean;
  currentPeriodStart: Date | null;
  currentPeriodEnd: Date | null;
  /** Ordering key: provider modified_at (else created_at, else the event time), then the event kind's rank. */
  sourceModifiedAt: Date;
  sourceRank: number;
}

export interface ParsedSubscriptionEvent {
  type: SubscriptionEventType;
  /** The account named by metadata.hosting_account_id, else the customer's external id. */
  accountId: string | null;
  state: Omit<SubscriptionState, 'accountId'>;
}

export function isSubscriptionEvent(type: string): type is SubscriptionEventType {
  return Object.hasOwn(SUBSCRIPTION_EVENTS, type);
}

/** Reads a subscription event; undefined when the data is not a subscription Parley understands. */
export function parseSubscriptionEvent(
  type: SubscriptionEventType,
  data: unknown,
  eventTime: Date,
): ParsedSubscriptionEvent | undefined {
  const parsed = subscriptionSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const s = parsed.data;
  const fromMetadata = s.metadata?.['hosting_account_id'];
  const accountId =
    typeof fromMetadata === 'string' && fromMetadata.length > 0 ? fromMetadata : (s.customer?.external_id ?? null);
  return {
    type,
    accountId,
    state: {
      id: s.id,
      customerId: s.customer_id ?? s.customer?.id ?? null,
      productId: s.product_id ?? s.product?.id ?? null,
      status: s.status,
      revoked: type === 'subscription.revoked',
      currentPeriodStart: s.current_period_start,
      currentPeriodEnd: s.current_period_end,
      sourceModifiedAt: s.modified_at ?? s.created_at ?? eventTime,
      sourceRank: SUBSCRIPTION_EVENTS[type],
    },
  };
}

/** Whether `incoming` is newer than `stored` (strictly): only newer states replace older ones. */
export function isNewer(
  incoming: Pick<SubscriptionState, 'sourceModifiedAt' | 'sourceRank'>,
  stored: Pick<SubscriptionState, 'sourceModifiedAt' | 'sourceRank'>,
): boolean {
  const a = incoming.sourceModifiedAt.getTime();
  const b = stored.sourceModifiedAt.getTime();
  return a > b || (a === b && incoming.sourceRank > stored.sourceRank);
}

/** What the account's hosting row should say, derived from all its subscriptions. */
export interface DerivedPlan {
  planCode: PlanCode;
  /** The subscription the hosting account reflects (the granting one, else the newest); null when none. */
  subscription: SubscriptionState | null;
}

/**
 * The plan is a pure function of the account's subscription states, so webhook order and replays do not matter.
 * A subscription grants its plan only while active or trialing, not revoked, and only when its product is one of
 * the allowlisted BILLING_PRODUCT_ID_* (an unknown product never grants a plan). With several granting, the one
 * whose current period started last wins. With none, the account is on free.
 */
export function derivePlan(
  states: readonly SubscriptionState[],
  planForProduct: (productId: string | null) => PlanCode | undefined,
): DerivedPlan {
  const granting = states.filter(
    (s) =>
      !s.revoked && (s.status === 'active' || s.status === 'trialing') && planForProduct(s.productId) !== undefined,
  );
  const byKey = (a: SubscriptionState, b: SubscriptionState, key: (s: SubscriptionState) => number): number =>
    key(b) - key(a);
  if (granting.length > 0) {
    const [best] = [...granting].sort(
      (a, b) =>
        byKey(a, b, (s) => s.currentPeriodStart?.getTime() ?? 0) ||
        byKey(a, b, (s) => s.sourceModifiedAt.getTime()) ||
        a.id.localeCompare(b.id),
    );
    return { planCode: planForProduct(best!.productId)!, subscription: best! };
  }
  const [newest] = [...states].sort(
    (a, b) =>
      byKey(a, b, (s) => s.sourceModifiedAt.getTime()) || byKey(a, b, (s) => s.sourceRank) || a.id.localeCompare(b.id),
  );
  return { planCode: 'free', subscription: newest ?? null };
}
