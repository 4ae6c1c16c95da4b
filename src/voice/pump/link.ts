import type { VoiceLinkState } from '../../providers/voice/index.js';
import type { LiveSessionListener, LiveVoiceSession } from '../session/live-session.js';

/**
 * What the relay core needs of a voice session (ARCHITECTURE rule 8: a RealtimeSocket, this link and a clock; no
 * transport). A LiveVoiceSession fits through {@link linkOfSession}; unit tests pass a fake.
 */
export interface RelayLink {
  readonly sessionId: string;
  /** Caller audio to the provider. False when the provider link refused it (reconnecting, over). */
  sendAudio(pcm: Buffer): boolean;
  mute(): void;
  unmute(): void;
  /** The playback gate: assistant audio (and captions) reach the caller only while it is open. */
  readonly gateOpen: boolean;
  /** The seq of the gate's current decision (the same numbers as the NDJSON gate stream). */
  readonly gateSeq: number;
  readonly linkState: VoiceLinkState;
  /** Caller frames the provider link discarded, oldest first, because it was slow (its own bounded queue). */
  readonly inputFramesDropped: number;
  /** Provider events fanned out; returns the unsubscribe. */
  subscribe(listener: LiveSessionListener): () => void;
  /** The caller's media socket opened / went away (a detach not followed by an attach ends the call `disconnected`). */
  attached(): void;
  detached(): void;
}

export function linkOfSession(session: LiveVoiceSession): RelayLink {
  return {
    sessionId: session.id,
    sendAudio: (pcm) => session.provider.sendAudio(pcm),
    mute: () => session.provider.mute(),
    unmute: () => session.provider.unmute(),
    get gateOpen() {
      return session.gate.isOpen;
    },
    get gateSeq() {
      return session.gate.current.seq;
    },
    get linkState() {
      return session.linkState;
    },
    get inputFramesDropped() {
      return session.provider.stats.audioFramesDropped;
    },
    subscribe: (listener) => session.subscribe(listener),
    attached: () => session.onMediaAttached(),
    detached: () => session.onMediaDetached(),
  };
}
