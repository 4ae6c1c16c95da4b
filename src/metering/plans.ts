/** Plan codes (docs/design-decisions.md, Usage and plans). New accounts start on free. */
export const PLAN_CODES = ['free', 'starter', 'pro', 'business'] as const;
export type PlanCode = (typeof PLAN_CODES)[number];

export function isPlanCode(value: unknown): value is PlanCode {
  return typeof value === 'string' && (PLAN_CODES as readonly string[]).includes(value);
}

/** One plan_entitlements row: the enforceable limits of a plan. Null caps mean "no cap". */
export interface PlanEntitlements {
  planCode: PlanCode;
  budgetMicros: number;
  maxAssistants: number | null;
  monthlyRequestCap: number | null;
  evalsEnabled: boolean;
  voiceMinutes: number;
  voiceConcurrentCalls: number;
}

/**
 * The default ladder, as seeded by migration 0004 (docs/design-decisions.md, Voice: the allowances). Used only
 * when a plan has no row: then the budget is HOSTED_USAGE_DEFAULT_LIMIT_MICROS and the other caps come from here.
 */
export const DEFAULT_PLANS: Readonly<Record<PlanCode, Omit<PlanEntitlements, 'planCode'>>> = Object.freeze({
  free: {
    budgetMicros: 1_000_000,
    maxAssistants: 1,
    monthlyRequestCap: 75,
    evalsEnabled: false,
    voiceMinutes: 10,
    voiceConcurrentCalls: 1,
  },
  starter: {
    budgetMicros: 12_000_000,
    maxAssistants: 5,
    monthlyRequestCap: 2_000,
    evalsEnabled: false,
    voiceMinutes: 120,
    voiceConcurrentCalls: 2,
  },
  pro: {
    budgetMicros: 45_000_000,
    maxAssistants: 20,
    monthlyRequestCap: 15_000,
    evalsEnabled: true,
    voiceMinutes: 600,
    voiceConcurrentCalls: 5,
  },
  business: {
    budgetMicros: 150_000_000,
    maxAssistants: 100,
    monthlyRequestCap: 50_000,
    evalsEnabled: true,
    voiceMinutes: 2_000,
    voiceConcurrentCalls: 10,
  },
});

/** The entitlements that apply: the stored row, or the fallback (default budget, default-ladder caps). */
export function effectiveEntitlements(
  planCode: PlanCode,
  row: PlanEntitlements | undefined,
  defaultLimitMicros: number,
): PlanEntitlements {
  if (row) return row;
  return { planCode, ...DEFAULT_PLANS[planCode], budgetMicros: defaultLimitMicros };
}

/**
 * The period's spend ceiling: the override when set, else the plan budget; plus operator credit. The owner's hard
 * limit, when set, caps it (the effective budget is the smaller of the two).
 */
export function limitMicrosOf(
  entitlements: PlanEntitlements,
  limitOverrideMicros: number | null,
  creditMicros: number,
  hardLimitMicros: number | null = null,
): number {
  const granted = (limitOverrideMicros ?? entitlements.budgetMicros) + creditMicros;
  return hardLimitMicros === null ? granted : Math.min(granted, hardLimitMicros);
}
