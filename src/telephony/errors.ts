import { AppError } from '../errors/index.js';

/** The telephony capability's error codes (stable; listed in docs/api.md). */
export const TelephonyErrorCodes = {
  /** 404: no such phone number in the caller's account. */
  NUMBER_NOT_FOUND: 'TELEPHONY_NUMBER_NOT_FOUND',
  /** 409: the number is already registered (a number reaches one assistant). */
  NUMBER_TAKEN: 'TELEPHONY_NUMBER_TAKEN',
  /** 403: the carrier's request signature is missing or wrong (nothing was started). */
  SIGNATURE_INVALID: 'TELEPHONY_SIGNATURE_INVALID',
} as const;

export const telephonyErrors = {
  notFound: () => new AppError(TelephonyErrorCodes.NUMBER_NOT_FOUND, 404, 'No such phone number.'),
  taken: () =>
    new AppError(TelephonyErrorCodes.NUMBER_TAKEN, 409, 'This phone number is already registered.', {
      details: { field: 'phoneNumber' },
    }),
  signatureInvalid: () =>
    new AppError(TelephonyErrorCodes.SIGNATURE_INVALID, 403, 'The request signature is missing or wrong.'),
};
