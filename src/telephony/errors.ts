import { AppError } from '../errors/index.js';

/** The telephony capability's error codes (stable; listed in docs/api.md). */
export const TelephonyErrorCodes = {
  /** 404: no such phone number in the caller's account. */
  NUMBER_NOT_FOUND: 'TELEPHONY_NUMBER_NOT_FOUND',
  /** 409: the number is already registered (a number reaches one assistant). */
  NUMBER_TAKEN: 'TELEPHONY_NUMBER_TAKEN',
  /** 403: the carrier's request signature is missing or wrong (nothing was started). */
  SIGNATURE_INVALID: 'TELEPHONY_SIGNATURE_INVALID',
  /** 409: the carrier would sign over a URL this server cannot know (no PUBLIC_URL, no trusted proxy scheme). */
  PUBLIC_URL_REQUIRED: 'TELEPHONY_PUBLIC_URL_REQUIRED',
} as const;

export const telephonyErrors = {
  notFound: () => new AppError(TelephonyErrorCodes.NUMBER_NOT_FOUND, 404, 'No such phone number.'),
  taken: () =>
    new AppError(TelephonyErrorCodes.NUMBER_TAKEN, 409, 'This phone number is already registered.', {
      details: { field: 'phoneNumber' },
    }),
  signatureInvalid: () =>
    new AppError(TelephonyErrorCodes.SIGNATURE_INVALID, 403, 'The request signature is missing or wrong.'),
  publicUrlRequired: () =>
    new AppError(
      TelephonyErrorCodes.PUBLIC_URL_REQUIRED,
      409,
      "Phone numbers need the server's public address: set PUBLIC_URL (or TRUST_PROXY behind a proxy that sends X-Forwarded-Proto). The carrier signs every call over the URL it calls.",
    ),
};
