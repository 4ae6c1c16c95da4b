import type { VoiceAudioFormat } from '../audio-format.js';
import { ALAW_TO_LINEAR, MULAW_TO_LINEAR, linearToAlaw, linearToMulaw } from '../g711.js';

/**
 * The local provider's audio conversions: the call's format to 16 kHz linear samples for the recognizer, and the
 * synthesizer's samples to the call's format. (The relay never converts audio; only this provider, which must hear
 * and speak itself, does.) Linear interpolation: speech sits well below the 4 kHz that the narrowest format keeps.
 */

/** Recognizer input rate. */
export const RECOGNIZER_RATE = 16000;

/** A streaming linear-interpolation resampler: chunks in, chunks out, no seams between them. */
export class Resampler {
  private readonly step: number;
  private position = 0;
  private previous = 0;

  constructor(
    readonly inRate: number,
    readonly outRate: number,
  ) {
    this.step = inRate / outRate;
  }

  push(input: Int16Array): Int16Array {
    if (this.inRate === this.outRate) return input;
    const n = input.length;
    const out = new Int16Array(Math.ceil((n - this.position) / this.step) + 1);
    let count = 0;
    let t = this.position;
    // Sample index -1 is the last sample of the previous chunk.
    while (t < n - 1) {
      const i = Math.floor(t);
      const frac = t - i;
      const a = i < 0 ? this.previous : input[i]!;
      const b = input[i + 1]!;
      out[count++] = Math.round(a + (b - a) * frac);
      t += this.step;
    }
    if (n > 0) this.previous = input[n - 1]!;
    this.position = t - n;
    return out.subarray(0, count);
  }
}

/** Linear samples of one frame of the call's audio. */
export function decodeFrame(frame: Buffer, audio: VoiceAudioFormat): Int16Array {
  if (audio.format === 'pcm16') {
    const out = new Int16Array(frame.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = frame.readInt16LE(i * 2);
    return out;
  }
  const table = audio.format === 'pcmu' ? MULAW_TO_LINEAR : ALAW_TO_LINEAR;
  const out = new Int16Array(frame.length);
  for (let i = 0; i < frame.length; i++) out[i] = table[frame[i]!]!;
  return out;
}

/** Linear samples in the call's format (PCM16LE bytes, or one G.711 byte per sample). */
export function encodeSamples(samples: Int16Array, audio: VoiceAudioFormat): Buffer {
  if (audio.format === 'pcm16') {
    const out = Buffer.allocUnsafe(samples.length * 2);
    for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
    return out;
  }
  const encode = audio.format === 'pcmu' ? linearToMulaw : linearToAlaw;
  const out = Buffer.allocUnsafe(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = encode(samples[i]!);
  return out;
}

/** Root mean square level of linear samples (0..32768). */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / samples.length);
}

/** Int16 view of PCM16LE bytes (copied: the bytes may be unaligned). */
export function samplesOf(pcm: Buffer): Int16Array {
  const out = new Int16Array(pcm.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = pcm.readInt16LE(i * 2);
  return out;
}

/** PCM16LE bytes of samples. */
export function bytesOf(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}

/**
 * Low-pass filter (windowed sinc, 63 taps) below `cutoffHz`: applied before the synthesizer's 22 050 Hz is brought
 * down to 16 or 8 kHz, so what lies above the new rate's limit does not fold back into the speech as hiss.
 */
export function lowPass(samples: Int16Array, rate: number, cutoffHz: number): Int16Array {
  const taps = 63;
  const half = (taps - 1) / 2;
  const fc = cutoffHz / rate;
  const kernel = new Float64Array(taps);
  let sum = 0;
  for (let i = 0; i < taps; i++) {
    const x = i - half;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const window = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (taps - 1));
    kernel[i] = sinc * window;
    sum += kernel[i]!;
  }
  const out = new Int16Array(samples.length);
  for (let n = 0; n < samples.length; n++) {
    let acc = 0;
    for (let k = 0; k < taps; k++) {
      const j = n + k - half;
      if (j >= 0 && j < samples.length) acc += samples[j]! * kernel[k]!;
    }
    out[n] = Math.max(-32768, Math.min(32767, Math.round(acc / sum)));
  }
  return out;
}
