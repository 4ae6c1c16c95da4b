import { AppError } from '../../errors/index.js';

/** Error codes of the voice provider layer (one table per capability). */
export const VoiceProviderErrorCodes = {
  /** session.started did not echo `allowed_client_events: []` in time, or the provider refused the lock. */
  UNCONFIRMED: 'VOICE_PROVIDER_UNCONFIRMED',
  /** The provider refused to start the session (HTTP 4xx/5xx on upgrade, or an error event before started). */
  REFUSED: 'VOICE_PROVIDER_REFUSED',
  /** Credentials rejected (401/403, invalid key). Fatal: never retried. */
  AUTH: 'VOICE_PROVIDER_AUTH',
  /** Provider quota or billing limit. Fatal: never retried. */
  QUOTA: 'VOICE_PROVIDER_QUOTA',
  /** The provider could not be reached, or the link dropped and could not be resumed. */
  UNAVAILABLE: 'VOICE_PROVIDER_UNAVAILABLE',
  /** An error event from the provider during a running session. */
  SESSION: 'VOICE_PROVIDER_SESSION_ERROR',
  /** The caller aborted the start. */
  ABORTED: 'VOICE_PROVIDER_ABORTED',
} as const;

export type VoiceProviderErrorCode = (typeof VoiceProviderErrorCodes)[keyof typeof VoiceProviderErrorCodes];

export interface VoiceProviderErrorOptions {
  /** HTTP status of a refused upgrade, when there was one. */
  providerStatus?: number;
  /** The provider's machine-readable error code (`invalid_api_key`, ...), when it sent one. */
  providerCode?: string;
  /** Fatal errors stop reconnection at once (bad key, quota, refused resume). */
  fatal?: boolean;
  cause?: unknown;
}

/**
 * Every provider failure surfaces as this type. It is an AppError mapped to 502 `voice_unavailable`, because that
 * is what a mint must answer when the provider cannot give a locked session.
 */
export class VoiceProviderError extends AppError {
  override readonly code: VoiceProviderErrorCode;
  readonly providerStatus: number | undefined;
  readonly providerCode: string | undefined;
  readonly fatal: boolean;

  constructor(code: VoiceProviderErrorCode, message: string, options: VoiceProviderErrorOptions = {}) {
    super(code, 502, message, { reason: 'voice_unavailable', cause: options.cause });
    this.name = 'VoiceProviderError';
    this.code = code;
    this.providerStatus = options.providerStatus;
    this.providerCode = options.providerCode;
    this.fatal = options.fatal ?? false;
  }
}

/** Provider error codes after which retrying cannot help (openai-node's error taxonomy). */
const FATAL_PROVIDER_CODES = new Set([
  'invalid_api_key',
  'insufficient_quota',
  'billing_hard_limit_reached',
  'account_deactivated',
]);

export function isFatalProviderCode(code: string | undefined): boolean {
  return code !== undefined && FATAL_PROVIDER_CODES.has(code);
}

/** The lock counts as refused when a 4xx or error names the data channel (that is "unconfirmed"). */
export function mentionsDataChannel(text: string): boolean {
  return /data[_ .-]?channel|allowed_client_events/i.test(text);
}

/**
 * Classify a refused upgrade. 401/403 and quota are fatal; a 4xx naming the data channel is an unconfirmed lock;
 * 408/425/429 and 5xx are worth retrying; any other 4xx is a refusal that retrying will not change.
 */
export function errorFromHttpStatus(status: number, body: string): VoiceProviderError {
  const codeMatch = /"code"\s*:\s*"([^"]{1,64})"/.exec(body);
  const providerCode = codeMatch?.[1];
  const base = { providerStatus: status, ...(providerCode === undefined ? {} : { providerCode }) };
  if (status === 401 || status === 403 || providerCode === 'invalid_api_key') {
    return new VoiceProviderError(VoiceProviderErrorCodes.AUTH, 'The voice provider rejected the credentials.', {
      ...base,
      fatal: true,
    });
  }
  if (isFatalProviderCode(providerCode) || (status === 429 && /quota|billing/i.test(body))) {
    return new VoiceProviderError(VoiceProviderErrorCodes.QUOTA, 'The voice provider quota is exhausted.', {
      ...base,
      fatal: true,
    });
  }
  if (status >= 400 && status < 500 && mentionsDataChannel(body)) {
    return new VoiceProviderError(
      VoiceProviderErrorCodes.UNCONFIRMED,
      'The voice provider refused the data-channel lock.',
      { ...base, fatal: true },
    );
  }
  const retryable = status >= 500 || status === 408 || status === 425 || status === 429;
  return new VoiceProviderError(VoiceProviderErrorCodes.REFUSED, 'The voice provider refused the session.', {
    ...base,
    fatal: !retryable,
  });
}
