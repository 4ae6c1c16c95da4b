import { AppError } from '../errors/index.js';

/** The calls capability's error codes (stable; listed in docs/api.md). */
export const CallsErrorCodes = {
  /** 404: no such call in the caller's account. */
  NOT_FOUND: 'CALLS_NOT_FOUND',
  /** 400: `from` is not a number registered to this account. */
  FROM_NOT_REGISTERED: 'CALLS_FROM_NOT_REGISTERED',
  /** 409: the assistant has voice turned off. */
  VOICE_DISABLED: 'CALLS_VOICE_DISABLED',
  /** 404: no such batch in the caller's account. */
  BATCH_NOT_FOUND: 'CALLS_BATCH_NOT_FOUND',
  /** 409: the batch cannot make that move from where it stands (resume a running one, pause a canceled one...). */
  BATCH_STATE: 'CALLS_BATCH_STATE',
  /** 409: the call is not on the line (a transfer needs an answered, live call). */
  NOT_LIVE: 'CALLS_NOT_LIVE',
  /** 409: the call is already over. */
  ALREADY_ENDED: 'CALLS_ALREADY_ENDED',
  /** 422: the carrier refused to place the call (its reason in the message); the call is `failed`. */
  CARRIER_REFUSED: 'CALLS_CARRIER_REFUSED',
  /** 503: the carrier did not answer; the call is `failed` (Retry-After). */
  CARRIER_UNAVAILABLE: 'CALLS_CARRIER_UNAVAILABLE',
} as const;

export const callsErrors = {
  notFound: () => new AppError(CallsErrorCodes.NOT_FOUND, 404, 'No such call.'),
  fromNotRegistered: () =>
    new AppError(CallsErrorCodes.FROM_NOT_REGISTERED, 400, 'from must be a phone number registered to this account.', {
      details: { field: 'from' },
    }),
  voiceDisabled: () =>
    new AppError(CallsErrorCodes.VOICE_DISABLED, 409, 'The assistant has voice turned off.', {
      details: { field: 'assistantId' },
    }),
  batchNotFound: () => new AppError(CallsErrorCodes.BATCH_NOT_FOUND, 404, 'No such call batch.'),
  batchCannot: (action: string, status: string) =>
    new AppError(CallsErrorCodes.BATCH_STATE, 409, `A ${status} batch cannot ${action}.`, { details: { status } }),
  notLive: (status: string) =>
    new AppError(CallsErrorCodes.NOT_LIVE, 409, `Only a live call can be transferred; this one is ${status}.`, {
      details: { status },
    }),
  alreadyEnded: () => new AppError(CallsErrorCodes.ALREADY_ENDED, 409, 'The call is already over.'),
  carrierRefused: (message: string) =>
    new AppError(CallsErrorCodes.CARRIER_REFUSED, 422, `The carrier refused the call: ${message}`),
  carrierUnavailable: () =>
    new AppError(CallsErrorCodes.CARRIER_UNAVAILABLE, 503, 'The carrier is not answering. Try again shortly.', {
      headers: { 'retry-after': '5' },
    }),
};
