/**
 * Voice sessions: the control plane of realtime voice (mint, heartbeat supervision, playback gate, end,
 * ownership records with 421). The media relay (voice-relay) plugs into `VoiceService.sessions` / LiveVoiceSession.
 */
import type { AnyRoute, AnySocketRoute, Authenticator } from '../http/index.js';
import { VoiceRecordings } from './recording/recordings.js';
import { recordingRoutes } from './recording/routes.js';
import { mediaSockets, type MediaSockets, type MediaSocketOptions } from './transports/websocket/media-socket.js';
import { voiceRoutes } from './routes.js';
import { VoiceService, type VoiceOptions, type VoiceServiceDeps } from './session/service.js';

export {
  VoiceService,
  HEARTBEAT_LOSS_MS,
  TOMBSTONE_TTL_MS,
  type VoiceOptions,
  type VoiceServiceDeps,
  type MintResult,
  type EndAnswer,
  type HeartbeatAnswer,
} from './session/service.js';
export { LiveVoiceSession, type LiveSessionListener, type SessionLimits } from './session/live-session.js';
export {
  GateChannel,
  GateStream,
  GATE_KEEPALIVE_MS,
  MAX_GATE_STREAMS,
  type GateDecision,
  type GateReason,
  type GateState,
} from './session/gate.js';
export { Supervisor, type Supervised } from './session/supervisor.js';
export {
  VoiceOwnership,
  OWNERSHIP_DEFAULTS,
  type OwnerLease,
  type OwnerRecord,
  type OwnershipTiming,
} from './session/ownership.js';
export { issueControlToken, verifyControlToken } from './session/control-token.js';
export { END_REASONS, presentEndReason, type EndReason, type VoiceAudience } from './end-reasons.js';
export { VoiceErrorCodes, voiceErrors } from './errors.js';
export {
  noVoiceQuota,
  meteredVoiceQuota,
  type MeteredVoiceQuotaOptions,
  type VoiceQuota,
  type VoiceQuotaRequest,
} from './session/quota.js';
export { MediaRelay, RELAY_CLOSE } from './transports/websocket/relay.js';
export { RELAY_DEFAULTS, type RelayOptions, type RelayStats, type RelayTap } from './pump/options.js';
export { linkOfSession, type RelayLink } from './pump/link.js';
export {
  mediaSockets,
  MEDIA_SOCKET_PATH,
  type MediaSessionLocator,
  type MediaSockets,
  type MediaSocketOptions,
} from './transports/websocket/media-socket.js';
export { VoiceRecordings, recordingLinksOf, type RecordingLink } from './recording/recordings.js';
export { voiceCallsOf, type ConversationCall } from './session/conversation-calls.js';
export { wavHeader, readWavHeader } from './recording/wav.js';
export type { VoiceFinal, VoiceSource, HeartbeatStatus, VoiceCapability as VoiceClientCapability } from './types.js';

/** Knobs of the media side (tests: relay limits, a recording clock). */
export interface VoiceMediaOptions {
  relay?: MediaSocketOptions['relay'];
  /** Recording timeline clock (ms, monotonic). Real time by default. */
  recordingNow?: () => number;
  /** How often recordings of deleted conversations are swept (default 10 minutes). */
  recordingSweepEveryMs?: number;
}

export interface VoiceCapabilityParts {
  routes: AnyRoute[];
  /** The media WebSocket (`stream.url`). */
  sockets: AnySocketRoute[];
  media: MediaSockets;
  recordings: VoiceRecordings;
  /** `control-token`: heartbeat and gate carry the session token in the body; the service checks it. */
  authenticators: Record<string, Authenticator>;
  service: VoiceService;
  /** Lifecycle: start on listen (supervision, renewal, orphan sweep); stop before the HTTP server stops (shutdown). */
  start(): void;
  /** SIGTERM: no new mints; resolves once every call here ended, or after `timeoutMs` (stop() ends the rest). */
  drain(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** Builds routes and the (not yet started) service. Does no I/O. */
/** Everything the app (and tests) may tune: the session service's options and the media side's. */
export type VoiceCapabilityOptions = VoiceOptions & { media?: VoiceMediaOptions };

export function voiceCapability(deps: VoiceServiceDeps, options: VoiceCapabilityOptions = {}): VoiceCapabilityParts {
  const service = new VoiceService(deps, options);
  const recordings = new VoiceRecordings(
    { dataDir: deps.config.DATA_DIR, sql: deps.sql, log: deps.log.child({ capability: 'voice-recordings' }) },
    options.media?.recordingNow,
  );
  const media = mediaSockets(service, {
    ...(options.media?.relay ? { relay: options.media.relay } : {}),
    tapFor: (session) => recordings.tapFor(session),
  });
  service.media = media;
  service.recordings = recordings;
  let sweepTimer: NodeJS.Timeout | undefined;
  return {
    routes: [...voiceRoutes(service), ...recordingRoutes({ sql: deps.sql, recordings })],
    sockets: [media.route],
    media,
    recordings,
    authenticators: { 'control-token': () => undefined },
    service,
    start: () => {
      service.start();
      sweepTimer ??= setInterval(
        () => void recordings.sweep().catch((err: unknown) => deps.log.warn({ err }, 'voice recording sweep failed')),
        options.media?.recordingSweepEveryMs ?? 10 * 60_000,
      );
      sweepTimer.unref();
    },
    drain: (timeoutMs) => service.drain(timeoutMs),
    stop: async () => {
      if (sweepTimer !== undefined) clearInterval(sweepTimer);
      sweepTimer = undefined;
      await service.stop();
      await recordings.settled();
    },
  };
}
