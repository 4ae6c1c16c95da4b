/**
 * Voice sessions: the control plane of realtime voice (mint, heartbeat supervision, playback gate, end,
 * ownership records with 421). The media relay (voice-relay) plugs into `VoiceService.sessions` / LiveVoiceSession.
 */
import type { Authenticator } from '../http/index.js';
import { voiceRoutes } from './routes.js';
import { VoiceService, type VoiceOptions, type VoiceServiceDeps } from './service.js';

export { VoiceService, HEARTBEAT_LOSS_MS, TOMBSTONE_TTL_MS, type VoiceOptions, type VoiceServiceDeps, type MintResult, type EndAnswer, type HeartbeatAnswer } from './service.js';
export { LiveVoiceSession, type LiveSessionListener, type SessionLimits } from './live-session.js';
export { GateChannel, GateStream, GATE_KEEPALIVE_MS, MAX_GATE_STREAMS, type GateDecision, type GateReason, type GateState } from './gate.js';
export { Supervisor, type Supervised } from './supervisor.js';
export { VoiceOwnership, OWNERSHIP_DEFAULTS, type OwnerLease, type OwnerRecord, type OwnershipTiming } from './ownership.js';
export { issueControlToken, verifyControlToken } from './control-token.js';
export { END_REASONS, presentEndReason, type EndReason, type VoiceAudience } from './end-reasons.js';
export { VoiceErrorCodes, voiceErrors } from './errors.js';
export { noVoiceQuota, type VoiceQuota, type VoiceQuotaRequest } from './quota.js';
export type { VoiceFinal, VoiceSource, HeartbeatStatus, VoiceCapability as VoiceClientCapability } from './types.js';

export interface VoiceCapabilityParts {
  routes: ReturnType<typeof voiceRoutes>;
  /** `control-token`: heartbeat and gate carry the session token in the body; the service checks it. */
  authenticators: Record<string, Authenticator>;
  service: VoiceService;
  /** Lifecycle: start on listen (supervision, renewal, orphan sweep); stop before the HTTP server stops (shutdown). */
  start(): void;
  stop(): Promise<void>;
}

/** Builds routes and the (not yet started) service. Does no I/O. */
export function voiceCapability(deps: VoiceServiceDeps, options: VoiceOptions = {}): VoiceCapabilityParts {
  const service = new VoiceService(deps, options);
  return {
    routes: voiceRoutes(service),
    authenticators: { 'control-token': () => undefined },
    service,
    start: () => service.start(),
    stop: () => service.stop(),
  };
}
