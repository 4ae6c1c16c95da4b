import type { EndReason, MediaNotice, Transcript } from './types.js';

/** A text event of the media socket (parley.voice.v1), as VoiceCall reads it. */
export type MediaEvent =
  | { type: 'notice'; notice: MediaNotice }
  | { type: 'state'; gateSeq?: number; gateOpen: boolean; link?: string; muted?: boolean }
  | { type: 'transcript'; transcript: Transcript }
  | { type: 'ended'; endReason: EndReason };

/** The bytes of a binary message (ArrayBuffer, Node Buffer or a view), or undefined for text. */
export function toBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  // Node's `ws` with binaryType nodebuffer hands over a Buffer: already a Uint8Array, no view to allocate per chunk.
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

/** Reads a text frame; undefined for anything that is not one of the protocol's events. */
export function readMediaEvent(data: string): MediaEvent | undefined {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  switch (event['type']) {
    case 'state':
      if (typeof event['notice'] === 'string') return { type: 'notice', notice: event as unknown as MediaNotice };
      return {
        type: 'state',
        ...(typeof event['gateSeq'] === 'number' ? { gateSeq: event['gateSeq'] } : {}),
        gateOpen: event['gate'] === 'open',
        ...(typeof event['link'] === 'string' ? { link: event['link'] } : {}),
        ...(typeof event['muted'] === 'boolean' ? { muted: event['muted'] } : {}),
      };
    case 'transcript':
      return {
        type: 'transcript',
        transcript: {
          role: event['role'] === 'assistant' ? 'assistant' : 'user',
          text: String(event['text'] ?? ''),
          startMs: Number(event['startMs'] ?? 0),
          endMs: Number(event['endMs'] ?? 0),
        },
      };
    case 'ended':
      return { type: 'ended', endReason: (event['endReason'] as EndReason | undefined) ?? null };
    default:
      return undefined;
  }
}
