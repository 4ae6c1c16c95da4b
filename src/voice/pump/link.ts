import type { RelayResidence, VoiceAudioFormat, VoiceLinkState } from '../../providers/voice/index.js';
import type { LiveSessionListener, LiveVoiceSession } from '../session/live-session.js';
import type { TurnClock } from '../timeline/turn-clock.js';

/**
 * What the media pump needs of a voice session: the pump takes a caller leg, this link and a clock, and no
 * transport (docs/house-rules.md), so it is tested with fakes. A LiveVoiceSession fits through
 * {@link linkOfSession}; unit tests pass a fake.
 */
export interface RelayLink {
  readonly sessionId: string;
  /** The call's audio format (PCM16 24 kHz when absent): frame limits and durations follow it. */
  readonly audio?: VoiceAudioFormat;
  /**
   * Caller audio to the provider. False when the provider link refused it (reconnecting, over). `readAt`: when the
   * pump read it (the residence clock), so the provider side can time it to its socket.
   */
  sendAudio(audio: Buffer, readAt?: number): boolean;
  /** Where the relay's residence figures go (the provider instance's), if measured. */
  readonly residence?: RelayResidence;
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
  /**
   * Presence: a caller connected / went away, whatever the transport (a detach not followed by an attach ends the
   * call `disconnected`; only time with a caller connected is billed).
   */
  attached(): void;
  detached(): void;
  /** The call's turn clock (its timeline): told of caller audio handed on and answer audio written. */
  readonly turns?: TurnClock;
}

export function linkOfSession(session: LiveVoiceSession): RelayLink {
  return {
    sessionId: session.id,
    audio: session.audio,
    sendAudio: (audio, readAt) => session.provider.sendAudio(audio, readAt),
    residence: session.provider.residence,
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
    turns: session.timeline.turnClock,
  };
}
