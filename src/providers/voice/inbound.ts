import type { WireEvent } from './protocol.js';
import type { VoiceCloseReason, VoiceDelegationRequest, VoiceTranscriptDelta } from './types.js';
import {
  VoiceProviderError,
  VoiceProviderErrorCodes as Codes,
  isFatalProviderCode,
  mentionsDataChannel,
} from './errors.js';

/**
 * Server events -> the interface's values. Fields are checked where used: a malformed event is counted as garbage
 * by the caller (undefined here), never thrown, because one bad frame must not end a call.
 */

export function readTranscript(event: WireEvent): VoiceTranscriptDelta | undefined {
  const text = event.delta,
    startMs = event.start_ms,
    endMs = event.end_ms;
  if (typeof text !== 'string' || typeof startMs !== 'number' || typeof endMs !== 'number') return undefined;
  return { text, startMs, endMs };
}

export function readDelegation(event: WireEvent): VoiceDelegationRequest | undefined {
  const d = event.delegation as { id?: unknown; target?: unknown; response_id?: unknown } | undefined;
  if (typeof d?.id !== 'string' || (d.target !== 'client' && d.target !== 'responses' && d.target !== 'decisions'))
    return undefined;
  const offsetMs = typeof event.offset_ms === 'number' ? event.offset_ms : 0;
  return {
    id: d.id,
    target: d.target,
    offsetMs,
    ...(typeof d.response_id === 'string' ? { responseId: d.response_id } : {}),
  };
}

export function readUsageSeconds(raw: unknown): number | undefined {
  const seconds = (raw as { seconds?: unknown } | undefined)?.seconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds : undefined;
}

const CLOSE_REASONS = new Set<string>(['close_requested', 'expired', 'content', 'remote_hangup', 'connection_lost']);

export function readCloseReason(event: WireEvent): VoiceCloseReason {
  return typeof event.reason === 'string' && CLOSE_REASONS.has(event.reason)
    ? (event.reason as VoiceCloseReason)
    : 'remote_hangup';
}

/**
 * An `error` event as a typed error. Before `session.started` every error refuses the start: naming the data
 * channel means the lock was refused (unconfirmed), a bad key or quota is fatal, anything else is a refusal. After
 * it, only key/quota errors are fatal; the rest are reported and the call goes on.
 */
export function errorFromEvent(event: WireEvent, starting: boolean): VoiceProviderError {
  const err = event.error as { code?: unknown; message?: unknown; param?: unknown } | undefined;
  const providerCode = typeof err?.code === 'string' ? err.code : undefined;
  const withCode = providerCode === undefined ? {} : { providerCode };
  if (providerCode === 'invalid_api_key') {
    return new VoiceProviderError(Codes.AUTH, 'The voice provider rejected the credentials.', {
      ...withCode,
      fatal: true,
    });
  }
  if (isFatalProviderCode(providerCode)) {
    return new VoiceProviderError(Codes.QUOTA, 'The voice provider quota is exhausted.', { ...withCode, fatal: true });
  }
  if (!starting) return new VoiceProviderError(Codes.SESSION, 'The voice provider reported an error.', withCode);
  const text = `${String(err?.code ?? '')} ${String(err?.param ?? '')} ${String(err?.message ?? '')}`;
  if (mentionsDataChannel(text)) {
    return new VoiceProviderError(Codes.UNCONFIRMED, 'The voice provider refused the data-channel lock.', {
      ...withCode,
      fatal: true,
    });
  }
  return new VoiceProviderError(Codes.REFUSED, 'The voice provider refused the session.', withCode);
}

/** What a `response.event` (the Responses backend's nested stream) means to Parley; undefined: nothing. */
export type BackendEvent =
  | { kind: 'created'; responseId: string }
  | { kind: 'call'; callId: string; name: string; arguments: string }
  | { kind: 'done'; responseId: string };

/**
 * Reads the nested Responses event: a response began (`response.created` / `response.in_progress`), a function call
 * is complete (`response.output_item.done` with a `function_call` item; its streamed pieces are not needed), or a
 * response ended (`response.completed` / `failed` / `incomplete`). Anything else (text deltas, reasoning) is ignored.
 */
export function readBackendEvent(event: WireEvent): BackendEvent | undefined {
  const inner = event.event as { type?: unknown; response?: { id?: unknown }; item?: unknown } | undefined;
  if (inner === null || typeof inner !== 'object' || typeof inner.type !== 'string') return undefined;
  const responseId = typeof inner.response?.id === 'string' ? inner.response.id : undefined;
  switch (inner.type) {
    case 'response.created':
    case 'response.in_progress':
      return responseId === undefined ? undefined : { kind: 'created', responseId };
    case 'response.completed':
    case 'response.failed':
    case 'response.incomplete':
      return responseId === undefined ? undefined : { kind: 'done', responseId };
    case 'response.output_item.done': {
      const item = inner.item as { type?: unknown; call_id?: unknown; name?: unknown; arguments?: unknown } | undefined;
      if (item?.type !== 'function_call' || typeof item.call_id !== 'string' || typeof item.name !== 'string')
        return undefined;
      return {
        kind: 'call',
        callId: item.call_id,
        name: item.name,
        arguments: typeof item.arguments === 'string' ? item.arguments : '',
      };
    }
    default:
      return undefined;
  }
}
