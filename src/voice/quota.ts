import type { VoiceSource } from './types.js';

/**
 * The voice-minutes and concurrency seam (VOICE.md, Usage). The voice-relay issue fills it with metering's voice
 * grants (300 s blocks, extended while the call runs, settled from the provider's final usage); until then the
 * session service runs on {@link noVoiceQuota}, which admits every call and records nothing.
 */
export interface VoiceQuotaRequest {
  accountId: string;
  sessionId: string;
  assistantId: string;
  source: VoiceSource;
  /** Widget/playground callers: refusals must be 403 voice_unavailable, never a usage reason. */
  keyless: boolean;
}

export interface VoiceQuota {
  /** Before the provider session starts. Throws the refusal (402 / 429 / 403 voice_unavailable) to refuse. */
  admit(request: VoiceQuotaRequest): Promise<void>;
  /**
   * Called by the supervisor while the call runs with the provider's cumulative seconds; resolves false when the
   * allowance is used up, and the session then ends with `usage_limit`. Must be cheap (it is polled).
   */
  extend(request: VoiceQuotaRequest, usedSeconds: number): Promise<boolean>;
  /** Exactly once per admitted session, whoever ends it (owner, client, or the instance that found it orphaned). */
  settle(request: VoiceQuotaRequest, billableSeconds: number, usageFinalized: boolean): Promise<void>;
  /** A mint that failed after admission (provider unconfirmed): release without billing. */
  release(request: VoiceQuotaRequest): Promise<void>;
}

export const noVoiceQuota: VoiceQuota = Object.freeze({
  admit: async () => undefined,
  extend: async () => true,
  settle: async () => undefined,
  release: async () => undefined,
});
