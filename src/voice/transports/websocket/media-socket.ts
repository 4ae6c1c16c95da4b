import type { RealtimeSocket, SocketRoute } from '../../../http/index.js';
import { systemClock, type VoiceClock } from '../../../providers/voice/index.js';
import type { LiveVoiceSession } from '../../session/live-session.js';
import { voiceErrors } from '../../errors.js';
import { SESSION_ID_PATTERN } from '../../session/session-id.js';
import { linkOfSession } from '../../pump/link.js';
import { MediaRelay } from './relay.js';
import {
  addTotals,
  newStats,
  RELAY_DEFAULTS,
  type RelayOptions,
  type RelayStats,
  type RelayTap,
} from '../../pump/options.js';

/** Per-connection data: the session the upgrade authenticated, and the relay once the socket is open. */
export interface MediaConnection {
  session: LiveVoiceSession;
  relay: MediaRelay | undefined;
}

export interface MediaSocketOptions {
  /** Media time (refusal-notice rate, mute toggles). Real time by default: supervision clocks do not apply. */
  clock?: Pick<VoiceClock, 'now'>;
  relay?: Partial<RelayOptions>;
  /** The recording tap of a session that is recorded (VoiceRecordings.tapFor). */
  tapFor?: (session: LiveVoiceSession) => RelayTap | undefined;
}

/** The media sockets of one instance: the route, and what tests and metrics read. */
export interface MediaSockets {
  route: SocketRoute<MediaConnection>;
  /** The current relay of each session with a caller connected. */
  readonly relays: ReadonlyMap<string, MediaRelay>;
  /** Counters of relays that have closed, summed (live ones: read `relays`). */
  readonly closedTotals: RelayStats;
}

/** What the socket needs of the control plane (VoiceService): the session an upgrade may open, or 404 / 421. */
export interface MediaSessionLocator {
  locateForMedia(sessionId: string, token: string): Promise<LiveVoiceSession>;
  /** The session when it lives here, without waiting; undefined sends the upgrade to locateForMedia (421 / 404). */
  localForMedia?(sessionId: string, token: string): LiveVoiceSession | undefined;
}

export const MEDIA_SOCKET_PATH = '/api/v1/voice/sessions/:sessionId/stream';
/** A frame over this closes the media socket with 1009 "frame too large" (one between the relay's limit and this is refused with a notice). */
export const MEDIA_FRAME_CLOSE_BYTES = 64 * 1024;
/** uWS's own cut (a close without a close frame, 1006): frames this large are never read. */
export const MEDIA_FRAME_HARD_CAP_BYTES = 1024 * 1024;
const SESSION_ID = SESSION_ID_PATTERN;

/**
 * The media WebSocket at the minted `stream.url` (docs/voice-protocol.md): the upgrade checks the control token
 * (`?token=`) and that the session runs on this instance (else 421 misrouted with `X-Parley-Instance`, before
 * upgrading). One media socket per session: a second connection replaces the first (closed 4001 "replaced").
 */
export function mediaSockets(service: MediaSessionLocator, options: MediaSocketOptions = {}): MediaSockets {
  const clock = options.clock ?? systemClock;
  const relayOptions = { ...RELAY_DEFAULTS, ...options.relay };
  const relays = new Map<string, MediaRelay>();
  const closedTotals = newStats();

  const route: SocketRoute<MediaConnection> = {
    path: MEDIA_SOCKET_PATH,
    // uWS drops a frame over maxPayloadLength with no close frame (the client sees 1006), so its cap sits far above
    // ours: a frame a little over the relay's limit gets a refusal notice, one over MEDIA_FRAME_CLOSE_BYTES a 1009
    // close with a reason, so the client learns why. Only frames over MEDIA_FRAME_HARD_CAP_BYTES still meet uWS's cut.
    maxPayloadLength: MEDIA_FRAME_HARD_CAP_BYTES,
    // The relay keeps its own backlog far below this (socketHighWaterBytes + one provider chunk); this is the
    // shell's hard stop.
    maxBackpressure: 512 * 1024,
    idleTimeoutSeconds: 60,
    upgrade(req) {
      const sessionId = req.params['sessionId'] ?? '';
      const token = req.query['token'];
      if (!SESSION_ID.test(sessionId) || typeof token !== 'string' || token === '') throw voiceErrors.notFound();
      // A session that lives here is accepted at once, inside uWS's upgrade callback (no await: see SocketRoute).
      const local = service.localForMedia?.(sessionId, token);
      if (local !== undefined) return { accept: { session: local, relay: undefined } };
      return service.locateForMedia(sessionId, token).then((session) => ({ accept: { session, relay: undefined } }));
    },
    open(socket) {
      const { session } = socket.data;
      if (session.status !== 'active') {
        // It ended between the upgrade and now.
        socket.send(JSON.stringify({ type: 'ended', endReason: session.endReason }), false);
        socket.end(1000, 'ended');
        return;
      }
      relays.get(session.id)?.replace();
      const relay = new MediaRelay(
        socket as RealtimeSocket<unknown>,
        linkOfSession(session),
        clock,
        relayOptions,
        options.tapFor?.(session),
        session.timeline,
      );
      socket.data.relay = relay;
      relays.set(session.id, relay);
      relay.start();
    },
    message(socket, data, binary) {
      if (data.byteLength > Math.max(MEDIA_FRAME_CLOSE_BYTES, relayOptions.maxFrameBytes + 1024)) {
        socket.end(1009, 'frame too large');
        return;
      }
      socket.data.relay?.onMessage(data, binary);
    },
    drain(socket) {
      socket.data.relay?.onDrain();
    },
    close(socket) {
      const relay = socket.data.relay;
      if (relay === undefined) return;
      relay.onClose();
      if (relays.get(socket.data.session.id) === relay) relays.delete(socket.data.session.id);
      addTotals(closedTotals, relay.stats);
      const s = relay.stats;
      socket.data.session.log.info(
        {
          callerFrames: s.callerFrames,
          callerFramesRefused: s.callerFramesRefused,
          callerTextDropped: s.callerTextDropped,
          assistantBytes: s.assistantBytes,
          assistantWithheldBytes: s.assistantWithheldBytes,
          assistantDroppedBytes: s.assistantDroppedBytes,
          inputFramesDroppedByLink: relay.link.inputFramesDropped,
          eventsDropped: s.eventsDropped,
          maxSocketBuffered: s.maxSocketBuffered,
        },
        'voice media socket closed',
      );
    },
  };
  return { route, relays, closedTotals };
}
