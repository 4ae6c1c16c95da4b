/**
 * Round-trip markers for the echo simulator (its `echo` mode returns caller audio byte for byte): the start of every
 * caller frame carries a tag (a magic, then the caller and a sequence number) made of near-silent samples, so it is
 * inaudible and below any voice detector. Audio that comes back holding a tag this run sent is an echo: its delay is
 * the round trip.
 *
 * PCM16: 12 samples (4 magic, then 8 six-bit digits), each within ±32 of silence (about -60 dBFS).
 * G.711: 16 bytes (4 magic, then 12 four-bit digits), each a code of the smallest segment (about -45 dBFS).
 */
import type { AudioFormat } from '../../voice/formats.js';

export interface Marker {
  /** Bytes the tag takes at the start of a frame. */
  readonly bytes: number;
  /** Writes the tag of (caller, seq) into the start of a frame (a copy the caller owns). */
  stamp(frame: Uint8Array, caller: number, seq: number): void;
  /** Calls `found(caller, seq)` for every tag in a chunk of returned audio (at any sample offset). */
  find(chunk: Uint8Array, found: (caller: number, seq: number) => void): void;
}

const MAGIC16 = [17, -23, 29, -11];
const DIGITS16 = 8; // 48 bits: 16 for the caller, 32 for the sequence
export const MARKER_BYTES = (MAGIC16.length + DIGITS16) * 2;

const MAGIC8 = [9, 3, 12, 6];
const DIGITS8 = 12; // 48 bits as 4-bit digits

/** 48 bits (caller: 16, seq: 32) as `count` digits of `bits` each, most significant first. */
function digitsOf(caller: number, seq: number, bits: number, count: number): number[] {
  const value = (caller & 0xffff) * 2 ** 32 + (seq >>> 0);
  const base = 2 ** bits;
  const out: number[] = [];
  let v = value;
  for (let i = 0; i < count; i++) {
    out.unshift(v % base);
    v = Math.floor(v / base);
  }
  return out;
}

function valueOf(digits: number[], bits: number): { caller: number; seq: number } {
  let v = 0;
  for (const d of digits) v = v * 2 ** bits + d;
  return { caller: Math.floor(v / 2 ** 32) & 0xffff, seq: v % 2 ** 32 };
}

function toSigned6(v: number): number {
  return v >= 32 ? v - 64 : v;
}

const pcm16Marker: Marker = {
  bytes: MARKER_BYTES,
  stamp(frame, caller, seq) {
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    MAGIC16.forEach((m, i) => view.setInt16(i * 2, m, true));
    digitsOf(caller, seq, 6, DIGITS16).forEach((d, i) => view.setInt16((MAGIC16.length + i) * 2, toSigned6(d), true));
  },
  find(chunk, found) {
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const last = chunk.byteLength - MARKER_BYTES;
    for (let at = 0; at <= last; at += 2) {
      if (view.getInt16(at, true) !== MAGIC16[0]) continue;
      if (
        view.getInt16(at + 2, true) !== MAGIC16[1] ||
        view.getInt16(at + 4, true) !== MAGIC16[2] ||
        view.getInt16(at + 6, true) !== MAGIC16[3]
      )
        continue;
      const d: number[] = [];
      for (let i = 0; i < DIGITS16; i++) d.push(view.getInt16(at + 8 + i * 2, true) & 63);
      const { caller, seq } = valueOf(d, 6);
      found(caller, seq);
      at += MARKER_BYTES - 2;
    }
  },
};

/** G.711: a 4-bit digit as a code of the smallest segment (μ-law 0xF0|d; A-law 0xD5^d). */
function g711Marker(format: 'pcmu' | 'pcma'): Marker {
  const code = format === 'pcmu' ? (d: number) => 0xf0 | d : (d: number) => 0xd5 ^ d;
  const digit = format === 'pcmu' ? (b: number) => b & 0x0f : (b: number) => (b ^ 0xd5) & 0x0f;
  const magic = MAGIC8.map(code);
  const bytes = MAGIC8.length + DIGITS8;
  return {
    bytes,
    stamp(frame, caller, seq) {
      magic.forEach((m, i) => (frame[i] = m));
      digitsOf(caller, seq, 4, DIGITS8).forEach((d, i) => (frame[MAGIC8.length + i] = code(d)));
    },
    find(chunk, found) {
      const last = chunk.byteLength - bytes;
      for (let at = 0; at <= last; at++) {
        if (chunk[at] !== magic[0] || chunk[at + 1] !== magic[1] || chunk[at + 2] !== magic[2]) continue;
        if (chunk[at + 3] !== magic[3]) continue;
        const d: number[] = [];
        for (let i = 0; i < DIGITS8; i++) d.push(digit(chunk[at + MAGIC8.length + i]!));
        const { caller, seq } = valueOf(d, 4);
        found(caller, seq);
        at += bytes - 1;
      }
    },
  };
}

/** The marker for a call's audio format. */
export function markerFor(audio: AudioFormat): Marker {
  return audio.format === 'pcm16' ? pcm16Marker : g711Marker(audio.format);
}

/** PCM16 tags (the default format). */
export const stampFrame = pcm16Marker.stamp;
export const findMarkers = pcm16Marker.find;
