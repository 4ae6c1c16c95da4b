/**
 * G.711 μ-law and A-law (ITU-T G.711): one byte per sample, 8 kHz. The relay never converts audio; these serve the
 * simulator (hearing and speaking a G.711 call) and tools that need linear samples. Decoding is a table lookup.
 */

function mulawToLinear(byte: number): number {
  const u = ~byte & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

function alawToLinear(byte: number): number {
  const a = byte ^ 0x55;
  const exponent = (a & 0x70) >> 4;
  let t = (a & 0x0f) << 4;
  t = exponent === 0 ? t + 8 : ((t + 0x108) << (exponent - 1)) >>> 0;
  return a & 0x80 ? t : -t;
}

/** Linear PCM16 value of every μ-law byte. */
export const MULAW_TO_LINEAR: Int16Array = Int16Array.from({ length: 256 }, (_, i) => mulawToLinear(i));
/** Linear PCM16 value of every A-law byte. */
export const ALAW_TO_LINEAR: Int16Array = Int16Array.from({ length: 256 }, (_, i) => alawToLinear(i));

/** μ-law byte of a PCM16 sample. */
export function linearToMulaw(sample: number): number {
  const BIAS = 0x84;
  let s = Math.max(-32635, Math.min(32635, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (sign !== 0) s = -s;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** A-law byte of a PCM16 sample. */
export function linearToAlaw(sample: number): number {
  let s = Math.max(-32768, Math.min(32767, Math.round(sample))) >> 3;
  let sign = 0x80;
  if (s < 0) {
    sign = 0;
    s = -s - 1;
  }
  let exponent = 0;
  while (exponent < 7 && s >= 32 << exponent) exponent++;
  const mantissa = exponent === 0 ? s >> 1 : (s >> exponent) & 0x0f;
  return ((sign | (exponent << 4) | mantissa) ^ 0x55) & 0xff;
}
