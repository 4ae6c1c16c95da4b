/**
 * What visitors read. Neutral on purpose (docs/house-rules.md rule 20): never plans, billing, usage or limits. The
 * service already presents usage ends as voice_unavailable and heartbeat/control/shutdown ends as disconnected for
 * widget callers; the raw reasons are mapped here too in case a future server sends them.
 */
export const endMessages: Record<string, string> = {
  client: 'Call ended.',
  superseded: 'This call continues in another window.',
  idle: 'The call ended because it was quiet for a while.',
  max_duration: 'The call reached its maximum length. You can start a new one.',
  disconnected: 'The call was disconnected. You can start a new one.',
  voice_unavailable: 'Voice is not available right now. You can keep typing here.',
};

/** The end reason a visitor is told about (unknown or internal reasons fall back to the neutral ones). */
export function visibleEndReason(reason: string | null | undefined): string {
  if (reason === null || reason === undefined) return 'client';
  if (reason === 'usage_limit') return 'voice_unavailable';
  if (reason in endMessages) return reason;
  return 'disconnected';
}

export const errorMessages = {
  originNotAllowed: 'This assistant is not available on this site.',
  unavailable: 'The assistant is not available right now. Please try again later.',
  voiceUnavailable: endMessages['voice_unavailable']!,
  busy: 'Too many requests right now. Please wait a moment and try again.',
  network: 'The assistant cannot be reached. Check your connection and try again.',
  microphoneDenied: 'The microphone is blocked. Allow it in your browser to talk, or type your message.',
  microphoneMissing: 'No microphone was found. You can type your message instead.',
  audioUnsupported: 'This browser cannot make voice calls. You can type your message instead.',
  interrupted: 'The answer was interrupted. Please ask again.',
  generic: 'Something went wrong. Please try again.',
  signature: 'This conversation could not be verified. Please reload the page.',
} as const;

/** What the status line says in each voice state. */
export const stateLabels: Record<string, string> = {
  idle: '',
  connecting: 'Connecting…',
  listening: 'Listening',
  thinking: 'Thinking…',
  speaking: 'Speaking',
  reconnecting: 'Reconnecting…',
  ended: '',
  error: '',
};
