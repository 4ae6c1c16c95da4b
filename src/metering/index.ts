/**
 * Usage metering and plans: the meter (admit / settle / release, voice grants), plan entitlements, the price
 * catalog, billing periods, the stale-reservation sweeper and the owner usage routes.
 */
export { Meter, type EnforcementMode, type MeterConfig, type Reservation } from './service.js';
export {
  reserveVoiceSeconds,
  settleVoiceSeconds,
  listVoiceGrants,
  voiceBudgetAllows,
  voiceExemptions,
  precheckVoiceCall,
  VOICE_GRANT_SECONDS,
  type VoiceGrant,
} from './voice.js';
export { assertCanCreateAssistant, assertEvalsAllowed } from './entitlements.js';
export { sweepStaleReservations, startUsageSweeper, type UsageSweeper } from './sweeper.js';
export { MeteringErrorCodes, refusalError, isUsageRefusal } from './errors.js';
export { PLAN_CODES, limitMicrosOf, type PlanCode, type PlanEntitlements } from './plans.js';
export { priceChat, priceIngestion, estimateTokens } from './prices.js';
export { systemClock, type Clock } from './periods.js';
export { readAccountPeriod } from './account-period.js';
export { addPeriodCredit, listPlanEntitlements, updatePlanEntitlements, type PlanPatch } from './operator.js';
export { usageRoutes } from './routes.js';
export { forecastOf, thresholdChanges, type ThresholdAlert, type ThresholdSink } from './budget.js';
export { costByConversation, costByVoiceCall } from './budget-queries.js';
