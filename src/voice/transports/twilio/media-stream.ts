import type { RealtimeSocket, SocketRoute } from '../../../http/index.js';
import { systemClock } from '../../../providers/voice/index.js';
import { voiceErrors } from '../../errors.js';
import { linkOfSession } from '../../pump/link.js';
import {
  addTotals,
  newStats,
  RELAY_DEFAULTS,
  type RelayOptions,
  type RelayStats,
  type RelayTap,
} from '../../pump/options.js';
import type { LiveVoiceSession } from '../../session/live-session.js';
import { SESSION_ID_PATTERN } from '../../session/session-id.js';
import { carrierSignature, signatureMatches } from './codec.js';
import { PhoneRelay, type PhoneEventSink } from './relay.js';

export const PHONE_STREAM_PATH = '/api/v1/voice/sessions/:sessionId/phone-stream';

export interface PhoneStreamOptions {
  /** The live session of this instance with that id. */
  sessionOf(sessionId: string): LiveVoiceSession | undefined;
  /** The call's control token (it arrives in `start`, never in the URL). */
  checkToken(sessionId: string, token: string): boolean;
  relay?: Partial<RelayOptions>;
  tapFor?: (session: LiveVoiceSession) => RelayTap | undefined;
  /** Every stream's events (start, dtmf, clear, mark, stop), for the call's timeline. */
  onEvent?: PhoneEventSink;
}

interface PhoneConnection {
  session: LiveVoiceSession;
  relay: PhoneRelay | undefined;
}

/** A stream the carrier was told to open: its URL (what it signs) and the auth token of the number it called. */
interface ExpectedStream {
  url: string;
  authToken: string;
}

/**
 * The carrier's media stream socket. A stream is expected (its URL and the number's auth token) from the moment the
 * webhook answered; the upgrade must carry the carrier's signature over that URL, else 404 before upgrading (a
 * stranger learns nothing). The proxy routes `/api/v1/voice/sessions/{id}/…` to the owning instance, so the
 * expectation lives in this instance's memory, dropped when the call ends.
 */
export function phoneStreams(options: PhoneStreamOptions) {
  const relays = new Map<string, PhoneRelay>();
  const expected = new Map<string, ExpectedStream>();
  const closedTotals: RelayStats = newStats();
  const relayOptions = { ...RELAY_DEFAULTS, ...options.relay };

  const route: SocketRoute<PhoneConnection> = {
    path: PHONE_STREAM_PATH,
    maxPayloadLength: 256 * 1024,
    maxBackpressure: 512 * 1024,
    idleTimeoutSeconds: 60,
    upgrade(req) {
      const sessionId = req.params['sessionId'] ?? '';
      if (!SESSION_ID_PATTERN.test(sessionId)) throw voiceErrors.notFound();
      const stream = expected.get(sessionId);
      const session = options.sessionOf(sessionId);
      if (stream === undefined || session === undefined || session.status !== 'active') throw voiceErrors.notFound();
      // One stream per call: the signature is over the URL alone, so whoever saw the carrier's upgrade could replay
      // it; a second stream is refused, never allowed to replace (and so hang up) the caller's.
      if (relays.has(sessionId)) throw voiceErrors.notFound();
      const received = req.headers['x-twilio-signature'];
      if (!signatureMatches(carrierSignature(stream.authToken, stream.url), received)) throw voiceErrors.notFound();
      return { accept: { session, relay: undefined } };
    },
    open(socket) {
      const { session } = socket.data;
      if (session.status !== 'active') {
        socket.end(1000, session.endReason ?? 'ended');
        return;
      }
      if (relays.has(session.id)) {
        // Two upgrades raced past the check above: the first keeps the call.
        socket.end(1008, 'not this call');
        return;
      }
      const relay = new PhoneRelay(
        socket as RealtimeSocket<unknown>,
        session,
        linkOfSession(session),
        systemClock,
        (token) => options.checkToken(session.id, token),
        options.onEvent,
        relayOptions,
        options.tapFor?.(session),
      );
      socket.data.relay = relay;
      relays.set(session.id, relay);
    },
    message(socket, data, binary) {
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
      socket.data.session.log.info(
        { callerFrames: relay.stats.callerFrames, assistantBytes: relay.stats.assistantBytes, ...relay.phone },
        'phone media stream closed',
      );
    },
  };

  /** The webhook answered with this stream: the carrier may now open it, signed with the number's token. */
  function expect(sessionId: string, url: string, authToken: string): void {
    const session = options.sessionOf(sessionId);
    if (session === undefined) return;
    expected.set(sessionId, { url, authToken });
    session.subscribe({ onEnded: () => void expected.delete(sessionId) });
  }

  return { route, relays: relays as ReadonlyMap<string, PhoneRelay>, closedTotals, expect };
}
