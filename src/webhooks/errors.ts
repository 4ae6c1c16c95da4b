import { AppError } from '../errors/index.js';

/** The webhooks capability's error codes (stable; documented in the errors index). */
export const WebhookErrorCodes = {
  /** 404: no such endpoint in the caller's account. */
  ENDPOINT_NOT_FOUND: 'WEBHOOK_ENDPOINT_NOT_FOUND',
  /** 404: no such delivery of this endpoint. */
  DELIVERY_NOT_FOUND: 'WEBHOOK_DELIVERY_NOT_FOUND',
  /** 400 (field `url`): not http(s), carries credentials, or points to a private, local or reserved address. */
  URL_NOT_ALLOWED: 'WEBHOOK_URL_NOT_ALLOWED',
  /** 409: the account already has the most endpoints it may have (every event is sent once per endpoint). */
  ENDPOINT_LIMIT: 'WEBHOOK_ENDPOINT_LIMIT',
  /** 409: the endpoint is turned off (by its owner, or by Parley after it answered 410 Gone); enable it first. */
  ENDPOINT_DISABLED: 'WEBHOOK_ENDPOINT_DISABLED',
} as const;

export const webhookErrors = {
  endpointNotFound: () => new AppError(WebhookErrorCodes.ENDPOINT_NOT_FOUND, 404, 'No such webhook endpoint.'),
  deliveryNotFound: () => new AppError(WebhookErrorCodes.DELIVERY_NOT_FOUND, 404, 'No such delivery.'),
  urlNotAllowed: (message: string) =>
    new AppError(WebhookErrorCodes.URL_NOT_ALLOWED, 400, message, { details: { field: 'url' } }),
  endpointLimit: (max: number) =>
    new AppError(WebhookErrorCodes.ENDPOINT_LIMIT, 409, `An account can have at most ${max} webhook endpoints.`, {
      details: { maxEndpoints: max },
    }),
  endpointDisabled: () =>
    new AppError(
      WebhookErrorCodes.ENDPOINT_DISABLED,
      409,
      'The webhook endpoint is disabled; enable it (PATCH enabled: true) before sending to it.',
    ),
};
