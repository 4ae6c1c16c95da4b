/**
 * The audio formats a call may carry (chosen at mint, both ways, mono): PCM16LE at 16 or 24 kHz, or G.711 μ-law
 * (`pcmu`) / A-law (`pcma`) at 8 kHz. Parley passes them through to the provider unchanged. Browser-safe helpers to
 * size frames and to convert PCM16 input (files, synthetic speech) once, before a call, into the call's format.
 */
export type AudioFormat =
  | { format: 'pcm16'; sampleRateHz: 16000 | 24000 }
  | { format: 'pcmu'; sampleRateHz: 8000 }
  | { format: 'pcma'; sampleRateHz: 8000 };

export const DEFAULT_AUDIO: AudioFormat = { format: 'pcm16', sampleRateHz: 24000 };

/** Bytes of one sample: 2 for PCM16, 1 for G.711. */
export function bytesPerSampleOf(audio: AudioFormat): 1 | 2 {
  return audio.format === 'pcm16' ? 2 : 1;
}

/** Bytes of one millisecond: 48 for PCM16 at 24 kHz, 32 at 16 kHz, 8 for G.711. */
export function bytesPerMsOf(audio: AudioFormat): number {
  return (audio.sampleRateHz * bytesPerSampleOf(audio)) / 1000;
}

/** Parse `pcm16`, `pcm16/16000`, `pcmu`, `pcma` (what a command line says). */
export function parseAudioFormat(text: string): AudioFormat {
  const [format, rate] = text.trim().toLowerCase().split(/[/:@]/);
  if (format === 'pcmu' || format === 'pcma') {
    if (rate !== undefined && rate !== '8000') throw new Error(`${format} is 8000 Hz only`);
    return { format, sampleRateHz: 8000 };
  }
  if (format === 'pcm16') {
    if (rate === undefined || rate === '24000') return { format, sampleRateHz: 24000 };
    if (rate === '16000') return { format, sampleRateHz: 16000 };
    throw new Error('pcm16 is 16000 or 24000 Hz');
  }
  throw new Error(`unknown audio format "${text}" (pcm16, pcm16/16000, pcmu or pcma)`);
}

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

/** μ-law byte of a PCM16 sample (ITU-T G.711). */
export function linearToMulaw(sample: number): number {
  let s = Math.max(-32635, Math.min(32635, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (sign !== 0) s = -s;
  s += 0x84;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  return ~(sign | (exponent << 4) | ((s >> (exponent + 3)) & 0x0f)) & 0xff;
}

/** A-law byte of a PCM16 sample (ITU-T G.711). */
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

let mulawTable: Int16Array | undefined;
let alawTable: Int16Array | undefined;

/** Audio in the call's format -> PCM16LE at the format's rate (G.711 decoded; PCM16 returned as is). */
export function toPcm16(audio: Uint8Array, format: AudioFormat): Uint8Array {
  if (format.format === 'pcm16') return audio;
  const table =
    format.format === 'pcmu'
      ? (mulawTable ??= Int16Array.from({ length: 256 }, (_, i) => mulawToLinear(i)))
      : (alawTable ??= Int16Array.from({ length: 256 }, (_, i) => alawToLinear(i)));
  const out = new Uint8Array(audio.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < audio.length; i++) view.setInt16(i * 2, table[audio[i]!]!, true);
  return out;
}

/**
 * PCM16LE at `fromHz` -> the call's format (resampled by linear interpolation, then G.711-encoded where asked). Done
 * once on input audio before a call, never per frame.
 */
export function fromPcm16(pcm: Uint8Array, format: AudioFormat, fromHz = 24000): Uint8Array {
  const inView = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const inSamples = pcm.byteLength >> 1;
  if (format.format === 'pcm16' && format.sampleRateHz === fromHz) return pcm;
  const outSamples = Math.floor((inSamples * format.sampleRateHz) / fromHz);
  const ratio = fromHz / format.sampleRateHz;
  const at = (i: number): number => {
    const x = i * ratio;
    const j = Math.floor(x);
    const a = inView.getInt16(Math.min(j, inSamples - 1) * 2, true);
    const b = inView.getInt16(Math.min(j + 1, inSamples - 1) * 2, true);
    return Math.round(a + (b - a) * (x - j));
  };
  if (format.format === 'pcm16') {
    const out = new Uint8Array(outSamples * 2);
    const view = new DataView(out.buffer);
    for (let i = 0; i < outSamples; i++) view.setInt16(i * 2, at(i), true);
    return out;
  }
  const encode = format.format === 'pcmu' ? linearToMulaw : linearToAlaw;
  const out = new Uint8Array(outSamples);
  for (let i = 0; i < outSamples; i++) out[i] = encode(at(i));
  return out;
}
