import { AppError } from '../errors/index.js';

/**
 * The metering capability's error codes (docs/api.md, Who sees which refusal). Owners and API-key callers learn the
 * reason and the limit; widget visitors get VISITOR_UNAVAILABLE, which says nothing about plans or usage.
 */
export const MeteringErrorCodes = {
  /** 402 `usage_limit`: the period's budget (plan budget or override, plus credit) cannot cover the reservation. */
  LIMIT_REACHED: 'USAGE_LIMIT_REACHED',
  /** 402 `usage_limit`: the period's request cap is used up. */
  REQUEST_CAP_REACHED: 'USAGE_REQUEST_CAP_REACHED',
  /** 403 `plan_limit`: the plan allows no more assistants. */
  PLAN_LIMIT_ASSISTANTS: 'PLAN_LIMIT_ASSISTANTS',
  /** 403 `plan_limit`: the plan does not include evals. */
  PLAN_LIMIT_EVALS: 'PLAN_LIMIT_EVALS',
  /** 403: the hosting account is suspended or disabled (enforce mode). */
  ACCOUNT_INACTIVE: 'USAGE_ACCOUNT_INACTIVE',
  /** 402 `voice_minutes_exhausted`: fewer than 30 voice seconds are grantable this period (API-key callers). */
  VOICE_MINUTES_EXHAUSTED: 'USAGE_VOICE_MINUTES_EXHAUSTED',
  /** 429 `voice_concurrency_limit`: the plan's concurrent voice calls are all in use. */
  VOICE_CONCURRENCY_LIMIT: 'USAGE_VOICE_CONCURRENCY_LIMIT',
  /**
   * 403, no reason: any usage refusal seen by a widget/keyless visitor. Deliberately neutral (docs/house-rules.md rule
   * 20): the code, message and body never mention plans, billing or remaining usage.
   */
  VISITOR_UNAVAILABLE: 'ASSISTANT_UNAVAILABLE',
  /** 403 `voice_unavailable`: a voice refusal seen by a widget/keyless visitor (docs/house-rules.md rule 20). */
  VISITOR_VOICE_UNAVAILABLE: 'VOICE_UNAVAILABLE',
} as const;

export type MeteringErrorCode = (typeof MeteringErrorCodes)[keyof typeof MeteringErrorCodes];

/** Who is refused: owners (API keys, dashboard) see reasons and limits; visitors see a neutral 403. */
export type Audience = 'owner' | 'visitor';

/** Why an admission was refused, before it is shaped for its audience. */
export type Refusal =
  | { kind: 'budget'; limitMicros: number; consumedMicros: number; reservedMicros: number; requestedMicros: number }
  | { kind: 'request_cap'; monthlyRequestCap: number; requestCount: number }
  | { kind: 'assistants'; maxAssistants: number; assistantCount: number }
  | { kind: 'evals'; planCode: string }
  | { kind: 'account_inactive'; status: string }
  | { kind: 'voice_minutes'; voiceSecondsLimit: number; voiceSecondsUsed: number; voiceSecondsReserved: number }
  | { kind: 'voice_concurrency'; voiceConcurrentCalls: number };

/** What an owner refused by a plan can do about it (owners only: visitors never hear of plans). */
const UNLOCK =
  'Upgrade the plan, or ask an operator of this server to change it (dashboard Admin); on a server without billing, ' +
  'the operator can set SELF_HOSTED=true to lift plan limits.';

/**
 * The error a refusal becomes for its audience. Visitors never learn which limit it was; a refused call (`voice`)
 * is `voice_unavailable` to them whatever the limit.
 */
export function refusalError(refusal: Refusal, audience: Audience, channel: 'voice' | 'text' = 'text'): AppError {
  const isVoice = channel === 'voice' || refusal.kind === 'voice_minutes' || refusal.kind === 'voice_concurrency';
  if (audience === 'visitor') {
    return isVoice
      ? new AppError(MeteringErrorCodes.VISITOR_VOICE_UNAVAILABLE, 403, 'Voice is not available right now.', {
          reason: 'voice_unavailable',
        })
      : new AppError(MeteringErrorCodes.VISITOR_UNAVAILABLE, 403, 'This assistant cannot answer right now.');
  }
  switch (refusal.kind) {
    case 'budget': {
      const { kind: _kind, ...details } = refusal;
      return new AppError(
        MeteringErrorCodes.LIMIT_REACHED,
        402,
        'The usage budget for this billing period is used up.',
        {
          reason: 'usage_limit',
          details: {
            ...details,
            remainingMicros: Math.max(0, refusal.limitMicros - refusal.consumedMicros - refusal.reservedMicros),
          },
        },
      );
    }
    case 'request_cap':
      return new AppError(
        MeteringErrorCodes.REQUEST_CAP_REACHED,
        402,
        'The monthly request cap of the plan is reached.',
        {
          reason: 'usage_limit',
          details: { monthlyRequestCap: refusal.monthlyRequestCap, requestCount: refusal.requestCount },
        },
      );
    case 'assistants':
      return new AppError(
        MeteringErrorCodes.PLAN_LIMIT_ASSISTANTS,
        403,
        `The plan allows no more assistants. ${UNLOCK}`,
        {
          reason: 'plan_limit',
          details: { maxAssistants: refusal.maxAssistants, assistantCount: refusal.assistantCount },
        },
      );
    case 'evals':
      return new AppError(MeteringErrorCodes.PLAN_LIMIT_EVALS, 403, `Evals are not included in the plan. ${UNLOCK}`, {
        reason: 'plan_limit',
        details: { planCode: refusal.planCode },
      });
    case 'account_inactive':
      return new AppError(MeteringErrorCodes.ACCOUNT_INACTIVE, 403, `The hosting account is ${refusal.status}.`, {
        details: { status: refusal.status },
      });
    case 'voice_minutes':
      return new AppError(
        MeteringErrorCodes.VOICE_MINUTES_EXHAUSTED,
        402,
        'The voice minutes for this billing period are used up.',
        {
          reason: 'voice_minutes_exhausted',
          details: {
            voiceSecondsLimit: refusal.voiceSecondsLimit,
            voiceSecondsUsed: refusal.voiceSecondsUsed,
            voiceSecondsReserved: refusal.voiceSecondsReserved,
          },
        },
      );
    case 'voice_concurrency':
      return new AppError(MeteringErrorCodes.VOICE_CONCURRENCY_LIMIT, 429, 'Too many voice calls are active.', {
        reason: 'voice_concurrency_limit',
        details: { voiceConcurrentCalls: refusal.voiceConcurrentCalls },
        // A slot frees as soon as one of the account's calls ends.
        headers: { 'retry-after': '5' },
      });
  }
}

/** Thrown with the refusal kept for callers that need to tell refusals apart (voice: end reason usage_limit). */
export function isUsageRefusal(err: unknown): boolean {
  return err instanceof AppError && (Object.values(MeteringErrorCodes) as string[]).includes(err.code);
}
