import { AppError, validationError } from '../errors/index.js';

/**
 * The voice capability's error codes (stable, documented in the errors index). `reason` is set only where the
 * contract names one (voice_unavailable, client_update_required, misrouted).
 */
export const VoiceErrorCodes = {
  /** 403 client_update_required: the client did not declare playback_gate (since 1.3.0). */
  CLIENT_UPDATE_REQUIRED: 'VOICE_CLIENT_UPDATE_REQUIRED',
  /** 400: the session would be recorded, consent is required and recordingConsent is not true. */
  CONSENT_REQUIRED: 'VOICE_CONSENT_REQUIRED',
  /** 403: voice is not enabled for this assistant (keyless callers see VOICE_UNAVAILABLE instead). */
  DISABLED: 'VOICE_DISABLED',
  /** 403 voice_unavailable: any refusal shown to a widget/keyless caller (usage reasons are never shown). */
  UNAVAILABLE: 'VOICE_UNAVAILABLE',
  /** 404: no such session, or the control token does not open it. */
  SESSION_NOT_FOUND: 'VOICE_SESSION_NOT_FOUND',
  /** 421 misrouted: the session runs on another instance (details.instanceId says which). */
  MISROUTED: 'VOICE_MISROUTED',
  /** 429 (Retry-After: 1): more than one heartbeat per second for a session. */
  HEARTBEAT_TOO_FREQUENT: 'VOICE_HEARTBEAT_TOO_FREQUENT',
  /** 429: the session already has the maximum number of open gate streams (4). */
  GATE_STREAM_LIMIT: 'VOICE_GATE_STREAM_LIMIT',
  /** 503: the voice provider is not configured on this instance. */
  PROVIDER_NOT_CONFIGURED: 'VOICE_PROVIDER_NOT_CONFIGURED',
  /** 503: the instance is draining; mint on another one. */
  DRAINING: 'VOICE_DRAINING',
  /**
   * 429 `voice_concurrency_limit`: this instance already runs VOICE_MAX_CONCURRENT_SESSIONS calls (every enforcement
   * mode). Widget callers get VOICE_UNAVAILABLE instead.
   */
  INSTANCE_CONCURRENCY_LIMIT: 'VOICE_INSTANCE_CONCURRENCY_LIMIT',
  /** 404: no recording for this session (not recorded, no consent, not finished yet, or its conversation is gone). */
  RECORDING_NOT_FOUND: 'VOICE_RECORDING_NOT_FOUND',
  /** 403: a signed recording link whose session id, expiry or signature was altered. */
  RECORDING_LINK_INVALID: 'VOICE_RECORDING_LINK_INVALID',
  /** 410: a signed recording link past its expiry (ask the API for a new one). */
  RECORDING_LINK_EXPIRED: 'VOICE_RECORDING_LINK_EXPIRED',
  /**
   * 400: PUBLIC_URL is unset and the request's Host header is not one host[:port] (duplicated, empty, junk), so no
   * media URL can be given. Refused before any provider session starts (so a bad Host never leaves a provider session behind).
   */
  HOST_INVALID: 'VOICE_HOST_INVALID',
  /**
   * 400: the mint asked for a transport the voice provider does not take (`details.transports` lists the ones it
   * does; the widget reads them from its config and never asks). Refused before anything starts.
   */
  TRANSPORT_UNSUPPORTED: 'VOICE_TRANSPORT_UNSUPPORTED',
} as const;

export type VoiceErrorCode = (typeof VoiceErrorCodes)[keyof typeof VoiceErrorCodes];

export const voiceErrors = {
  /** 400 VALIDATION_FAILED: a capability outside heartbeat / playback_gate. */
  unknownCapabilities: (unknown: string[]) =>
    validationError(
      unknown.map((c) => ({
        path: 'body.capabilities',
        message: `unknown capability "${c.slice(0, 40)}"; allowed: heartbeat, playback_gate`,
      })),
      'body',
    ),
  clientUpdateRequired: () =>
    new AppError(
      VoiceErrorCodes.CLIENT_UPDATE_REQUIRED,
      403,
      'The body field `capabilities` must include "playback_gate" (e.g. capabilities: ["heartbeat", ' +
        '"playback_gate"]): a voice client declares that it reports when playback ends. A client that sends none ' +
        'must be updated.',
      {
        reason: 'client_update_required',
        details: { field: 'capabilities', required: ['playback_gate'] },
      },
    ),
  consentRequired: () =>
    new AppError(
      VoiceErrorCodes.CONSENT_REQUIRED,
      400,
      'This call would be recorded: send recordingConsent: true to start it.',
    ),
  transportUnsupported: (asked: string, transports: readonly string[]) =>
    new AppError(
      VoiceErrorCodes.TRANSPORT_UNSUPPORTED,
      400,
      `This voice does not take ${asked} calls; use ${transports.join(' or ')} (body.transport).`,
      { details: { field: 'body.transport', transports: [...transports] } },
    ),
  disabled: () => new AppError(VoiceErrorCodes.DISABLED, 403, 'Voice is not enabled for this assistant.'),
  /** The only refusal a widget/keyless caller ever sees: neutral, no word about plans or usage. */
  unavailable: () =>
    new AppError(VoiceErrorCodes.UNAVAILABLE, 403, 'Voice is not available right now.', {
      reason: 'voice_unavailable',
    }),
  notFound: () => new AppError(VoiceErrorCodes.SESSION_NOT_FOUND, 404, 'No such voice session.'),
  misrouted: (instanceId: string, expiresAt: number) =>
    new AppError(VoiceErrorCodes.MISROUTED, 421, 'This voice session runs on another instance.', {
      reason: 'misrouted',
      details: { instanceId, expiresAt: new Date(expiresAt).toISOString() },
      headers: { 'x-parley-instance': instanceId },
    }),
  heartbeatTooFrequent: () =>
    new AppError(VoiceErrorCodes.HEARTBEAT_TOO_FREQUENT, 429, 'At most one heartbeat per second.', {
      headers: { 'retry-after': '1' },
    }),
  gateStreamLimit: (max: number) =>
    new AppError(VoiceErrorCodes.GATE_STREAM_LIMIT, 429, `At most ${max} gate streams may be open per session.`),
  providerNotConfigured: () =>
    new AppError(VoiceErrorCodes.PROVIDER_NOT_CONFIGURED, 503, 'Voice is not configured on this server.'),
  instanceConcurrencyLimit: (max: number) =>
    new AppError(VoiceErrorCodes.INSTANCE_CONCURRENCY_LIMIT, 429, 'Too many voice calls are active on this server.', {
      reason: 'voice_concurrency_limit',
      details: { maxConcurrentSessions: max },
      headers: { 'retry-after': '5' },
    }),
  hostInvalid: () =>
    new AppError(
      VoiceErrorCodes.HOST_INVALID,
      400,
      'The Host header must name one host (and port) to build the media URL; or set PUBLIC_URL.',
    ),
  recordingNotFound: () =>
    new AppError(VoiceErrorCodes.RECORDING_NOT_FOUND, 404, 'No recording for this voice session.'),
  recordingLinkInvalid: () =>
    new AppError(VoiceErrorCodes.RECORDING_LINK_INVALID, 403, 'This recording link is not valid.'),
  recordingLinkExpired: () =>
    new AppError(VoiceErrorCodes.RECORDING_LINK_EXPIRED, 410, 'This recording link has expired.'),
  draining: () =>
    new AppError(VoiceErrorCodes.DRAINING, 503, 'This server is shutting down; try again.', {
      headers: { 'retry-after': '1' },
    }),
};
