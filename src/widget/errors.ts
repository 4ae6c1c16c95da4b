import { AppError } from '../errors/index.js';

/**
 * The widget capability's error codes. Keyless refusals are neutral by rule: they never mention plans,
 * billing or remaining usage (docs/house-rules.md rule 20), and a rate-limit 429 carries no `reason`.
 */
export const WidgetErrorCodes = {
  /** 403: no Origin, or an Origin not in the assistant's allowedDomains (empty list: no keyless access). */
  ORIGIN_NOT_ALLOWED: 'WIDGET_ORIGIN_NOT_ALLOWED',
  /** 429: the visitor's or the assistant's widget request rate; Retry-After in seconds. */
  RATE_LIMITED: 'WIDGET_RATE_LIMITED',
  /** 403: the assistant requires a signed visitor id and none (or no visitorId) was sent. */
  SIGNATURE_REQUIRED: 'WIDGET_SIGNATURE_REQUIRED',
  /** 403: X-Parley-Signature does not match the visitor id, or is outside the allowed clock skew. */
  SIGNATURE_INVALID: 'WIDGET_SIGNATURE_INVALID',
  /** 404: no such message to rate (or not an answer of an assistant this origin may use). */
  MESSAGE_NOT_FOUND: 'WIDGET_MESSAGE_NOT_FOUND',
} as const;

export const widgetErrors = {
  /**
   * Seen in the browser console of the site that embeds the widget, so it speaks to that site's owner: which origin
   * to add, and where. Never a word about plans or billing (docs/house-rules.md rule 20).
   */
  originNotAllowed: (origin?: string) =>
    new AppError(
      WidgetErrorCodes.ORIGIN_NOT_ALLOWED,
      403,
      `This site may not use this assistant. Its owner can allow it: add ${
        origin !== undefined && /^https?:\/\/[^\s/]{1,253}$/i.test(origin) ? origin : "this site's origin"
      } to the assistant's allowed domains in the dashboard (assistant settings).`,
      { details: { field: 'origin' } },
    ),
  rateLimited: (retryAfterMs: number) =>
    new AppError(WidgetErrorCodes.RATE_LIMITED, 429, 'Too many requests; try again shortly.', {
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    }),
  signatureRequired: () =>
    new AppError(WidgetErrorCodes.SIGNATURE_REQUIRED, 403, 'A signed visitor id is required (X-Parley-Signature).'),
  signatureInvalid: () => new AppError(WidgetErrorCodes.SIGNATURE_INVALID, 403, 'The visitor signature is not valid.'),
  messageNotFound: () => new AppError(WidgetErrorCodes.MESSAGE_NOT_FOUND, 404, 'No such message.'),
};
