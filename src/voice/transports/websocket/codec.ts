import type { VoiceTranscriptDelta } from '../../../providers/voice/index.js';
import type { EndReason } from '../../end-reasons.js';
import type { PumpStateView } from '../../pump/media-pump.js';

/**
 * The `parley.voice.v1` wire codec (docs/voice-protocol.md). Server text events:
 * `{"type":"state","link","gate","gateSeq","muted"}` on open and on change (ordered with the audio: no assistant
 * audio follows a closed state until an open one), `{"type":"transcript","role","text","startMs","endMs"}`, notices
 * `audio_dropped` / `frame_refused` / `replaced`, then `{"type":"ended","endReason"}`. Caller text: only
 * `{"type":"mute"}` and `{"type":"unmute"}`; binary frames are audio in the call's format.
 */
export const PROTOCOL = 'parley.voice.v1' as const;

/** The pump's events as this protocol's JSON text frames (module functions: nothing allocated per connection). */
export const encode = {
  state: (view: PumpStateView): string =>
    JSON.stringify({
      type: 'state',
      link: view.link,
      gate: view.gateOpen ? 'open' : 'closed',
      gateSeq: view.gateSeq,
      muted: view.muted,
    }),
  transcript: (role: 'user' | 'assistant', d: VoiceTranscriptDelta): string =>
    JSON.stringify({ type: 'transcript', role, text: d.text, startMs: d.startMs, endMs: d.endMs }),
  audioDropped: (droppedBytes: number, droppedMs: number): string =>
    JSON.stringify({ type: 'state', notice: 'audio_dropped', droppedBytes, droppedMs }),
  frameRefused: (why: string, bytes: number, maxFrameBytes: number): string =>
    JSON.stringify({ type: 'state', notice: 'frame_refused', why, bytes, maxFrameBytes }),
  replaced: (): string => JSON.stringify({ type: 'state', notice: 'replaced' }),
  ended: (endReason: EndReason): string => JSON.stringify({ type: 'ended', endReason }),
};

const COMMANDS = new Set(['mute', 'unmute']);

/** A caller text frame: `mute` / `unmute`, or undefined for anything else (too long, not JSON, another type). */
export function readCallerText(data: ArrayBuffer, maxBytes: number): 'mute' | 'unmute' | undefined {
  if (data.byteLength > maxBytes) return undefined;
  let type: unknown;
  try {
    const value = JSON.parse(Buffer.from(data).toString('utf8')) as unknown;
    type =
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? (value as { type?: unknown }).type
        : undefined;
  } catch {
    return undefined;
  }
  return typeof type === 'string' && COMMANDS.has(type) ? (type as 'mute' | 'unmute') : undefined;
}
