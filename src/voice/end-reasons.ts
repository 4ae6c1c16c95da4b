/**
 * Why a session ended (docs/voice-protocol.md, end reasons; `shutdown` when the instance stops). `null` means the client ended it.
 * Stored as is; presented per audience by {@link presentEndReason}.
 */
export const END_REASONS = [
  'usage_limit',
  'superseded',
  'idle',
  'max_duration',
  'heartbeat_lost',
  'control_lost',
  'disconnected',
  'voice_unavailable',
  'shutdown',
  'assistant_ended',
  'transferred',
] as const;
export type ServiceEndReason = (typeof END_REASONS)[number];
export type EndReason = ServiceEndReason | null;

/** Who reads an answer: owners (API keys) see the real reason; widget/playground visitors see the neutral ones. */
export type VoiceAudience = 'owner' | 'visitor';

/**
 * Widget mapping (docs/design-decisions.md): usage_limit -> voice_unavailable (visitors never see usage reasons);
 * heartbeat_lost, control_lost, shutdown -> disconnected. Everything else is shown as is.
 */
export function presentEndReason(reason: EndReason, audience: VoiceAudience): EndReason {
  if (audience === 'owner' || reason === null) return reason;
  switch (reason) {
    case 'usage_limit':
      return 'voice_unavailable';
    case 'heartbeat_lost':
    case 'control_lost':
    case 'shutdown':
      return 'disconnected';
    default:
      return reason;
  }
}
