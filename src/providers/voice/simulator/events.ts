import type {
  CommentaryAppendedEvent,
  DelegationCreatedEvent,
  ErrorEvent,
  InputAudioMutedEvent,
  InputAudioUnmutedEvent,
  InputTranscriptDeltaEvent,
  InstructionsAppendedEvent,
  OutputAudioDeltaEvent,
  OutputTranscriptDeltaEvent,
  ServerEvent,
  SessionClosedEvent,
  SessionResource,
  SessionStartedEvent,
  SessionUpdatedEvent,
  SessionUsageUpdatedEvent,
  ThinkingAppendedEvent,
} from 'openai/resources/live/live';

/**
 * Every server event the simulator sends is built here with an explicit `openai` type, so the simulator cannot
 * drift from the real protocol without failing the typecheck (the contract's type-level test also compiles the
 * frames captured on the wire against `ServerEvent`).
 */

export type TimelineEvent = InputTranscriptDeltaEvent | OutputTranscriptDeltaEvent;

export const started = (event_id: string, session: SessionResource): SessionStartedEvent => ({
  type: 'session.started',
  event_id,
  session,
});

export const updated = (event_id: string, session: SessionResource, client_event_id?: string): SessionUpdatedEvent => ({
  type: 'session.updated',
  event_id,
  session,
  ...(client_event_id === undefined ? {} : { client_event_id }),
});

export const transcript = (
  type: TimelineEvent['type'],
  event_id: string,
  delta: string,
  start_ms: number,
  end_ms: number,
): TimelineEvent => ({ type, event_id, delta, start_ms, end_ms });

export const usageUpdated = (event_id: string, seconds: number): SessionUsageUpdatedEvent => ({
  type: 'session.usage.updated',
  event_id,
  usage: { seconds },
});

export const closed = (
  event_id: string,
  reason: SessionClosedEvent['reason'],
  session: SessionResource,
  seconds: number,
): SessionClosedEvent => ({ type: 'session.closed', event_id, reason, session, usage: { seconds } });

export const delegationCreated = (event_id: string, id: string, offset_ms: number): DelegationCreatedEvent => ({
  type: 'session.delegation.created',
  event_id,
  offset_ms,
  delegation: { id, target: 'client', type: 'delegation' },
});

export const muted = (event_id: string, on: boolean): InputAudioMutedEvent | InputAudioUnmutedEvent =>
  on ? { type: 'session.input_audio.muted', event_id } : { type: 'session.input_audio.unmuted', event_id };

type Appended = InstructionsAppendedEvent | CommentaryAppendedEvent | ThinkingAppendedEvent;
export const appended = (type: Appended['type'], event_id: string, at_ms: number): Appended => ({
  type,
  event_id,
  start_ms: at_ms,
  end_ms: at_ms,
});

export const error = (event_id: string, type: string, code: string, message: string, param?: string): ErrorEvent => ({
  type: 'error',
  event_id,
  error: { type, code, message, ...(param === undefined ? {} : { param }) },
});

const OUTPUT_AUDIO_TYPE: OutputAudioDeltaEvent['type'] = 'session.output_audio.delta';
/** The output audio frame, built like the adapter's append frame: prefix + base64 + suffix, no object per frame. */
export const OUTPUT_AUDIO_PREFIX = `{"type":"${OUTPUT_AUDIO_TYPE}","delta":"`;
export const OUTPUT_AUDIO_SUFFIX = '"}';

export function serialize(event: ServerEvent): string {
  return JSON.stringify(event);
}
