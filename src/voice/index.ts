/**
 * Voice: realtime calls. A transport-neutral session core (session/: admission, state machine, mint and end,
 * supervision, ownership with fencing, gate, quota, settlement), the caller transports (transports/<name>/: today the
 * `parley.voice.v1` WebSocket), the codec-free media pump they share (pump/) and recordings. This file is what the
 * rest of Parley uses; everything else is the capability's own.
 */
import { resolve } from 'node:path';
import type { Admission } from '../admission/index.js';
import type { RelayResidence } from '../providers/voice/index.js';
import type { AnyRoute, AnySocketRoute, Authenticator } from '../http/index.js';
import { VoiceRecordings } from './recording/recordings.js';
import { RecordingLinks } from './recording/links.js';
import { recordingRoutes } from './recording/routes.js';
import { RecordingLinkSigner } from './recording/signed-link.js';
import { createRecordingStore, type RecordingStore } from './recording/store/index.js';
import { voiceRoutes } from './routes.js';
import { VoiceService, type VoiceOptions, type VoiceServiceDeps } from './session/service.js';
import { controlTokenAuthenticator, guardControlTokenRoutes, verifyControlToken } from './session/control-token.js';
import { joinedConnections, relayTotalsOf } from './session/transport.js';
import { timelineRoutes } from './timeline/routes.js';
import { twilioTransport, type PhoneEventSink, type TwilioTransport } from './transports/twilio/index.js';
import type { MediaSocketOptions } from './transports/websocket/media-socket.js';
import { websocketTransport } from './transports/websocket/index.js';
import { webrtcTransport } from './transports/webrtc/index.js';

export { VoiceService, type VoiceOptions } from './session/service.js';
export type { LiveVoiceSession } from './session/live-session.js';
export { meteredVoiceQuota, type VoiceQuota, type VoiceQuotaRequest } from './session/quota.js';
export { recordingLinksOf } from './recording/recordings.js';
export { readWavHeader } from './recording/wav.js';
export { createRecordingStore } from './recording/store/index.js';
export { migrateDiskRecordings, type MigrationReport } from './recording/migrate.js';
export type { RecordingLinks, SignedRecordingLink } from './recording/links.js';
export { voiceCallsOf, type ConversationCall } from './session/conversation-calls.js';
export type { PhonePrincipal } from './session/mint.js';
export {
  carrierSignature,
  signatureMatches,
  TWILIO_TRANSPORT,
  type PhoneStreamEvent,
  type PhoneEventSink,
  type TwilioTransport,
} from './transports/twilio/index.js';

/** One dependency /readyz checks (the health capability's probe shape). */
export interface HealthProbe {
  name: string;
  check(signal: AbortSignal): Promise<void>;
}

/** Knobs of the media side (tests: relay limits, a recording clock). */
export interface VoiceMediaOptions {
  relay?: MediaSocketOptions['relay'];
  /** Recording timeline clock (ms, monotonic). Real time by default. */
  recordingNow?: () => number;
  /** How often recordings of deleted conversations are swept (default 10 minutes). */
  recordingSweepEveryMs?: number;
  /** Where finished recordings go (tests); default: the one RECORDINGS_STORE names. */
  recordingStore?: RecordingStore;
  /** Upload retry waits after a call (tests shorten them). */
  recordingRetryMs?: number[];
  /** Phone streams' events (start, dtmf, clear, mark, stop), e.g. for a call timeline. */
  onPhoneEvent?: PhoneEventSink;
}

/**
 * Everything the app (and tests) may tune: the session service's options, the media side's, and the admission pool
 * mints wait in (src/admission; none: every mint runs at once).
 */
export type VoiceCapabilityOptions = VoiceOptions & { media?: VoiceMediaOptions; admission?: Admission | undefined };

/** Figures the voice capability owns, read through it (metrics). */
export interface VoiceFigures {
  activeSessions(): number;
  /** Relay counters of every transport, closed and live connections summed. */
  relayTotals(): ReturnType<typeof relayTotalsOf>;
  /** Provider link reconnects of the live sessions. */
  liveProviderReconnects(): number;
  /** How long the relay holds audio frames (the voice provider's figures; undefined with voice off). */
  residence(): RelayResidence | undefined;
}

/**
 * The capability's one shape (like every capability: routes, sockets, authenticators, lifecycle), plus what the app
 * and tests reach: the service (live sessions), recordings and figures.
 */
export interface VoiceCapabilityParts {
  routes: AnyRoute[];
  /** Each transport's socket routes (the WebSocket transport: `stream.url`). */
  sockets: AnySocketRoute[];
  /** `control-token`: heartbeat and gate carry the session token in the body; the authenticator checks it. */
  authenticators: Record<string, Authenticator>;
  /** Start on listen (supervision, renewal, orphan sweep, recording sweep); stop before the HTTP server stops. */
  lifecycle: { name: string; start(): void; stop(): Promise<void> };
  service: VoiceService;
  recordings: VoiceRecordings;
  /** Signed, expiring recording links (an end-of-call report's recordingUrl). */
  recordingLinks: RecordingLinks;
  /** What /readyz checks for voice: the recordings bucket when RECORDINGS_STORE=s3 (HeadBucket), else nothing. */
  readiness: HealthProbe[];
  /** Phone calls: the carrier media-stream transport (the telephony capability mints calls onto it). */
  phone: TwilioTransport;
  figures: VoiceFigures;
  /** SIGTERM: no new mints; resolves once every call here ended, or after `timeoutMs` (stop() ends the rest). */
  drain(timeoutMs: number): Promise<void>;
}

/** Builds routes, the transports and the (not yet started) service. Does no I/O. */
export function voiceCapability(deps: VoiceServiceDeps, options: VoiceCapabilityOptions = {}): VoiceCapabilityParts {
  // Configuration reaches voice by one road, its own slice of deps.config; options carry collaborators (and the
  // sub-second timings fault tests use, which the environment's whole seconds cannot express).
  const ownershipTtlMs = deps.config.VOICE_OWNERSHIP_TTL_SECONDS * 1000;
  const service = new VoiceService(deps, {
    ownership: { ttlMs: ownershipTtlMs, renewEveryMs: Math.floor(ownershipTtlMs / 3) },
    orphanSweepEveryMs: deps.config.VOICE_ORPHAN_SWEEP_SECONDS * 1000,
    ...options,
  });
  const recordings = new VoiceRecordings(
    {
      dataDir: deps.config.DATA_DIR,
      sql: deps.sql,
      log: deps.log.child({ capability: 'voice-recordings' }),
      store:
        options.media?.recordingStore ?? createRecordingStore(deps.config, resolve(deps.config.DATA_DIR, 'recordings')),
      ...(options.media?.recordingRetryMs ? { retryMs: options.media.recordingRetryMs } : {}),
    },
    options.media?.recordingNow,
  );
  const signer = new RecordingLinkSigner(deps.config.secretKey);
  const maxTtlSeconds = deps.config.RECORDING_URL_TTL_SECONDS;
  const recordingLinks = new RecordingLinks(recordings, signer, {
    publicUrl: deps.config.PUBLIC_URL,
    host: deps.config.HOST,
    port: deps.config.PORT,
    maxTtlSeconds,
  });
  // A new transport is built here and attached beside this one; the session core never names it.
  const websocket = websocketTransport(service, {
    ...(options.media?.relay ? { relay: options.media.relay } : {}),
    tapFor: (session) => recordings.tapFor(session),
  });
  service.attachTransport(websocket);
  const phone = twilioTransport({
    sessionOf: (id) => service.sessions.get(id),
    checkToken: (id, token) => verifyControlToken(deps.config.secretKey, token, id, Date.now()),
    ...(options.media?.relay ? { relay: options.media.relay } : {}),
    tapFor: (session) => recordings.tapFor(session),
    ...(options.media?.onPhoneEvent ? { onEvent: options.media.onPhoneEvent } : {}),
  });
  service.attachTransport(phone);
  const connections = joinedConnections([websocket.connections, phone.connections]);
  // WebRTC callers reach the provider directly; this transport only watches the sideband for presence and recording.
  const webrtc = webrtcTransport({ tapFor: (session) => recordings.tapFor(session) });
  service.attachDirectTransport(webrtc);
  service.recordings = recordings;
  let sweepTimer: NodeJS.Timeout | undefined;
  return {
    routes: [
      ...guardControlTokenRoutes(voiceRoutes(service, options.admission)),
      ...recordingRoutes({ sql: deps.sql, recordings, signer, links: recordingLinks, maxTtlSeconds }),
      ...timelineRoutes({ sql: deps.sql, timelines: service.timelines }),
    ],
    sockets: [...websocket.sockets, ...phone.sockets],
    authenticators: { 'control-token': controlTokenAuthenticator(deps.config.secretKey) },
    service,
    recordings,
    recordingLinks,
    readiness:
      recordings.store.kind === 's3'
        ? [{ name: 'recordings', check: (signal: AbortSignal) => recordings.store.check(signal) }]
        : [],
    phone,
    figures: {
      activeSessions: () => service.sessions.size,
      relayTotals: () => relayTotalsOf(connections),
      liveProviderReconnects: () => {
        let n = 0;
        for (const session of service.sessions.values()) n += session.providerSession?.stats.reconnects ?? 0;
        return n;
      },
      residence: () => deps.voiceProvider?.residence,
    },
    lifecycle: {
      name: 'voice sessions',
      start: () => {
        service.start();
        if (sweepTimer === undefined) {
          void recordings
            .abortStaleUploads()
            .catch((err: unknown) => deps.log.warn({ err }, 'dangling recording uploads not checked at start'));
        }
        sweepTimer ??= setInterval(
          () => void recordings.sweep().catch((err: unknown) => deps.log.warn({ err }, 'voice recording sweep failed')),
          options.media?.recordingSweepEveryMs ?? 10 * 60_000,
        );
        sweepTimer.unref();
      },
      stop: async () => {
        if (sweepTimer !== undefined) clearInterval(sweepTimer);
        sweepTimer = undefined;
        await service.stop();
        webrtc.stop();
        await recordings.settled();
        recordings.store.close();
      },
    },
    drain: (timeoutMs) => service.drain(timeoutMs),
  };
}
