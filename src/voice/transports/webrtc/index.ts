import type { LiveVoiceSession } from '../../session/live-session.js';
import type { DirectMediaTransport } from '../../session/transport.js';
import type { RelayTap } from '../../pump/options.js';

export interface WebRtcTransportOptions {
  /** No reflected caller audio for this long: the caller is away (billing pauses; the grace period runs). 3 s. */
  absentAfterMs?: number;
  /** How often absence is checked (one timer for every WebRTC call of the instance). 1 s. */
  checkEveryMs?: number;
  /** The recording tap of a call (with consent), fed from what the sideband reflects. */
  tapFor?: (session: LiveVoiceSession) => RelayTap | undefined;
}

interface Watched {
  session: LiveVoiceSession;
  tap: RelayTap | undefined;
  present: boolean;
  lastHeardAt: number;
  watchedAt: number;
}

/** A mint that failed after watching never registers its session: forgotten after this long. */
const UNREGISTERED_FORGET_MS = 30_000;

/**
 * The WebRTC transport: the caller's browser holds a peer connection to the provider (the mint passes its offer and
 * returns the provider's answer) and Parley holds the sideband. No audio passes through Parley, so presence comes from
 * the sideband: the caller's audio, reflected there as the provider received it, means a caller is connected (the call
 * joins and billing runs); none for `absentAfterMs` means the caller is away (billing pauses and the session's grace
 * period runs, as when a media socket closes). A consented recording is written from the reflected audio both ways
 * (the assistant's only while the playback gate is open, as a relayed call records what the caller may hear).
 * The call's turns are timed from the sideband too: from the caller's end of speech (the provider's transcript, on the
 * reflected audio's timeline) to the answer's first audio the sideband reflects with the gate open.
 */
export function webrtcTransport(options: WebRtcTransportOptions = {}): DirectMediaTransport & { stop(): void } {
  const absentAfterMs = options.absentAfterMs ?? 3000;
  const checkEveryMs = options.checkEveryMs ?? 1000;
  const watched = new Map<string, Watched>();
  let timer: NodeJS.Timeout | undefined;

  const check = (): void => {
    const now = Date.now();
    for (const w of watched.values()) {
      if (w.session.lease === undefined && now - w.watchedAt > UNREGISTERED_FORGET_MS) watched.delete(w.session.id);
      else if (w.present && now - w.lastHeardAt >= absentAfterMs) {
        w.present = false;
        w.session.onMediaDetached();
      }
    }
  };

  return {
    name: 'webrtc',
    watch(session, watchOptions) {
      const present = watchOptions?.present === true;
      const now = Date.now();
      const w: Watched = { session, tap: undefined, present, lastHeardAt: present ? now : 0, watchedAt: now };
      let tapAsked = false;
      const tap = (): RelayTap | undefined => {
        // Asked once the call is registered and running (a recording starts with the call, not the mint attempt).
        if (!tapAsked && session.status === 'active' && session.lease !== undefined) {
          tapAsked = true;
          w.tap = options.tapFor?.(session);
        }
        return w.tap;
      };
      const clock = session.timeline.turnClock;
      watched.set(session.id, w);
      session.subscribe({ onEnded: () => watched.delete(session.id) });
      timer ??= setInterval(check, checkEveryMs).unref();
      return {
        onInputAudio: (pcm) => {
          // The turn clock's caller audio: the provider's audio timeline, as Parley sees it reflected.
          clock.callerAudio(pcm.length);
          w.lastHeardAt = Date.now();
          if (!w.present && session.status === 'active' && session.lease !== undefined) {
            w.present = true;
            session.onMediaAttached();
          }
          tap()?.caller(pcm);
        },
        onOutputAudio: (pcm) => {
          const open = session.gate.isOpen;
          if (open) tap()?.assistant(pcm);
          session.handlers.onOutputAudio?.(pcm);
          // The provider sends the answer to the caller itself: its first audio on the sideband (with the gate open,
          // so the widget plays it) ends the turn. Nothing is held by Parley, so the relay's parts are 0.
          if (open) clock.assistantAudioPlayedByProvider();
        },
      };
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      watched.clear();
    },
  };
}
