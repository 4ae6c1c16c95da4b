/**
 * Usage metering and plans: the meter (admit / settle / release, voice grants), plan entitlements, the price
 * catalog, billing periods, the stale-reservation sweeper and the owner usage routes.
 */
export {
  Meter,
  costOf,
  type AdmitRequest,
  type EnforcementMode,
  type MeterConfig,
  type MeterDeps,
  type Reservation,
  type SettleOutcome,
  type SettleUsage,
  type UsageSource,
} from './service.js';
export {
  reserveVoiceSeconds,
  settleVoiceSeconds,
  listVoiceGrants,
  voiceBudgetAllows,
  VOICE_GRANT_SECONDS,
  VOICE_MIN_GRANT_SECONDS,
  type VoiceGrant,
  type VoiceGrantRequest,
} from './voice.js';
export { assertCanCreateAssistant, assertEvalsAllowed } from './entitlements.js';
export { sweepStaleReservations, startUsageSweeper, type SweepResult, type UsageSweeper } from './sweeper.js';
export {
  MeteringErrorCodes,
  refusalError,
  isUsageRefusal,
  type Audience,
  type MeteringErrorCode,
  type Refusal,
} from './errors.js';
export {
  PLAN_CODES,
  DEFAULT_PLANS,
  isPlanCode,
  limitMicrosOf,
  effectiveEntitlements,
  type PlanCode,
  type PlanEntitlements,
} from './plans.js';
export {
  MODEL_PRICES,
  FALLBACK_MODEL_PRICE,
  INGESTION_CHUNK_MICROS,
  VOICE_SECOND_MICROS,
  priceChat,
  estimateChat,
  priceIngestion,
  priceVoiceSeconds,
  estimateTokens,
  modelPrice,
} from './prices.js';
export { systemClock, addMonthsUtc, periodContaining, nextPeriod, type Clock, type Period } from './periods.js';
export { lockAccountPeriod, readAccountPeriod, type LockedAccount } from './account-period.js';
export { addPeriodCredit, listPlanEntitlements, updatePlanEntitlements, type PlanPatch } from './operator.js';
export { usageRoutes } from './routes.js';
export {
  effectiveBudget,
  forecastOf,
  thresholdChanges,
  DEFAULT_ALERT_THRESHOLDS,
  type BudgetSettings,
  type BudgetSource,
  type EffectiveBudget,
  type Forecast,
  type ThresholdAlert,
  type ThresholdSink,
} from './budget.js';
export { costByConversation, costByVoiceCall } from './budget-queries.js';
