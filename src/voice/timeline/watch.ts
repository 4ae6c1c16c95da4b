import type { VoiceLinkState, VoiceSessionHandlers } from '../../providers/voice/index.js';
import type { LiveSessionListener, LiveVoiceSession } from '../session/live-session.js';

/**
 * What the session core tells a call's timeline, as one more listener of the session (subscribed at the mint,
 * before the provider starts and before any caller connects, so it runs before the media pump's): the provider
 * link's states, the gate's openings and closings, the caller's speech and the answer's first audio (the turn
 * clock). Presence, the end and the settlement are recorded where they happen (the session and the service).
 */
export function watchTimeline(session: LiveVoiceSession): () => void {
  const { timeline } = session;
  const clock = timeline.turnClock;
  let link: VoiceLinkState = 'connected';
  let gateState = session.gate.current.state;
  let gateReason = session.gate.current.reason;
  const listener: LiveSessionListener = {
    onOutputAudio: () => clock.providerAudio(session.gate.isOpen),
    onInputTranscript: (delta) => clock.callerSpeech(delta.endMs),
    onLinkState: (state) => {
      if (state === link) return;
      const was = link;
      link = state;
      if (state === 'reconnecting') timeline.record('provider_reconnecting');
      else if (state === 'connected' && was === 'reconnecting') timeline.record('provider_reconnected');
      else if (state === 'lost') timeline.record('provider_lost');
      timeline.setDegraded('provider_link', state === 'reconnecting');
    },
    onGate: (decision) => {
      if (decision.reason === 'pending_backend') clock.groundingStarted();
      else clock.groundingEnded();
      // Each fragment of the caller's speech is a new decision; only a change of state or reason is an event.
      if (decision.state === gateState && decision.reason === gateReason) return;
      gateState = decision.state;
      gateReason = decision.reason;
      timeline.record(decision.state === 'open' ? 'gate_opened' : 'gate_closed', {
        reason: decision.reason,
        seq: decision.seq,
      });
    },
  };
  return session.subscribe(listener);
}

/** The provider handlers of a call with its timeline told when caller audio leaves for the provider. */
export function handlersWithTimeline(session: LiveVoiceSession): VoiceSessionHandlers {
  const clock = session.timeline.turnClock;
  return { ...session.handlers, onAudioSent: (bytes) => clock.audioSent(bytes) };
}
