/**
 * Round-trip markers for the echo simulator (its `echo` mode returns caller audio byte for byte): the first 12
 * samples of every caller frame carry a tag (a 4-sample magic, then the caller and a sequence number, 6 bits per
 * sample). Every sample of the tag is within ±32 of silence (about -60 dBFS), so it is inaudible and below any voice
 * detector. Audio that comes back holding a tag this run sent is an echo: its delay is the round trip.
 */
const MAGIC = [17, -23, 29, -11];
const DATA_SAMPLES = 8; // 48 bits: 16 for the caller, 32 for the sequence
export const MARKER_BYTES = (MAGIC.length + DATA_SAMPLES) * 2;

function toSigned6(v: number): number {
  return v >= 32 ? v - 64 : v;
}

/** Writes the tag of (caller, seq) into the start of a frame (a copy the caller owns). */
export function stampFrame(frame: Uint8Array, caller: number, seq: number): void {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  MAGIC.forEach((m, i) => view.setInt16(i * 2, m, true));
  // 48 bits as 8 six-bit digits: caller (16 bits) then seq (32 bits).
  const hi = caller & 0xffff;
  const lo = seq >>> 0;
  const digits = [
    (hi >>> 10) & 63,
    (hi >>> 4) & 63,
    ((hi & 15) << 2) | (lo >>> 30),
    (lo >>> 24) & 63,
    (lo >>> 18) & 63,
    (lo >>> 12) & 63,
    (lo >>> 6) & 63,
    lo & 63,
  ];
  digits.forEach((d, i) => view.setInt16((MAGIC.length + i) * 2, toSigned6(d), true));
}

/** Calls `found(caller, seq)` for every tag in a chunk of returned audio (at any even offset). */
export function findMarkers(chunk: Uint8Array, found: (caller: number, seq: number) => void): void {
  const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const last = chunk.byteLength - MARKER_BYTES;
  for (let at = 0; at <= last; at += 2) {
    if (view.getInt16(at, true) !== MAGIC[0]) continue;
    if (
      view.getInt16(at + 2, true) !== MAGIC[1] ||
      view.getInt16(at + 4, true) !== MAGIC[2] ||
      view.getInt16(at + 6, true) !== MAGIC[3]
    )
      continue;
    const d: number[] = [];
    for (let i = 0; i < DATA_SAMPLES; i++) d.push(view.getInt16(at + 8 + i * 2, true) & 63);
    const caller = (d[0]! << 10) | (d[1]! << 4) | (d[2]! >>> 2);
    const seq = (((d[2]! & 3) << 30) | (d[3]! << 24) | (d[4]! << 18) | (d[5]! << 12) | (d[6]! << 6) | d[7]!) >>> 0;
    found(caller, seq);
    at += MARKER_BYTES - 2;
  }
}
