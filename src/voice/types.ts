import type { EndReason } from './end-reasons.js';

/** Where a call comes from: an API-key integration, the embeddable widget, the dashboard playground, or a phone line. */
export type VoiceSource = 'api' | 'widget' | 'playground' | 'phone' | 'test';

export const CAPABILITIES = ['heartbeat', 'playback_gate'] as const;
export type VoiceCapability = (typeof CAPABILITIES)[number];

/** Heartbeat statuses (docs/voice-protocol.md). */
export type HeartbeatStatus = 'healthy' | 'degraded' | 'ended' | 'lost';

/**
 * The final answer of a session, kept 5 minutes in the store after the end (the tombstone) and answered by the end
 * route. `endReason` is stored raw; routes present it per audience. `status` is `lost` when the session was
 * settled by an instance other than its owner (the owner died).
 */
export interface VoiceFinal {
  sessionId: string;
  status: 'ended' | 'lost';
  endReason: EndReason;
  billableSeconds: number;
  usageFinalized: boolean;
  /** Widget/playground session: answers are presented with the visitor mapping. */
  keyless: boolean;
}
