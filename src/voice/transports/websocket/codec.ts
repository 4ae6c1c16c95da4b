import type { RealtimeSocket } from '../../../http/index.js';
import type { PumpEvents } from '../../pump/media-pump.js';

/**
 * The `parley.voice.v1` wire codec (docs/voice-protocol.md). Server text events:
 * `{"type":"state","link","gate","gateSeq","muted"}` on open and on change (ordered with the audio: no assistant
 * audio follows a closed state until an open one), `{"type":"transcript","role","text","startMs","endMs"}`, notices
 * `audio_dropped` / `frame_refused` / `replaced`, then `{"type":"ended","endReason"}`. Caller text: only
 * `{"type":"mute"}` and `{"type":"unmute"}`; binary frames are audio in the call's format.
 */
export const PROTOCOL = 'parley.voice.v1' as const;

/** The pump's events as this protocol's JSON text frames; `onDropped` hears of each event the socket refused. */
export function parleyVoiceCodec(socket: RealtimeSocket<unknown>, onDropped: () => void): PumpEvents {
  const send = (json: string): void => {
    if (socket.send(json, false) === 'dropped') onDropped();
  };
  return {
    state: (view) =>
      send(
        JSON.stringify({
          type: 'state',
          link: view.link,
          gate: view.gateOpen ? 'open' : 'closed',
          gateSeq: view.gateSeq,
          muted: view.muted,
        }),
      ),
    transcript: (role, d) =>
      send(JSON.stringify({ type: 'transcript', role, text: d.text, startMs: d.startMs, endMs: d.endMs })),
    audioDropped: (droppedBytes, droppedMs) =>
      send(JSON.stringify({ type: 'state', notice: 'audio_dropped', droppedBytes, droppedMs })),
    frameRefused: (why, bytes, maxFrameBytes) =>
      send(JSON.stringify({ type: 'state', notice: 'frame_refused', why, bytes, maxFrameBytes })),
    ended: (endReason) => send(JSON.stringify({ type: 'ended', endReason })),
  };
}

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
