import type { AudioFormat as ProviderAudioFormat } from 'openai/resources/live/live';
import { audioFormatOfProvider, bytesPerMs, type VoiceAudioFormat } from '../audio-format.js';
import { ALAW_TO_LINEAR, MULAW_TO_LINEAR, linearToAlaw, linearToMulaw } from '../g711.js';

/**
 * The simulator hears and speaks the session's own format, as the provider does: PCM16 at 16 or 24 kHz, μ-law or
 * A-law at 8 kHz. Its voice (a PCM16 24 kHz fixture or tone) is converted once per format, never per frame.
 */
export interface SimAudio {
  readonly format: VoiceAudioFormat;
  readonly bytesPerMs: number;
  /** 20 ms of audio. */
  readonly frameBytes: number;
  /** What the simulator says, in this format (loops). */
  readonly voice: Buffer;
  /** Peak absolute level of a chunk, on the PCM16 scale whatever the format: its notion of "someone is speaking". */
  peak(chunk: Buffer): number;
}

export function simAudioFor(format: ProviderAudioFormat | undefined, voice24k: Buffer, cache: Map<string, SimAudio>) {
  const audio = audioFormatOfProvider(format);
  const key = `${audio.format}/${audio.sampleRateHz}`;
  let found = cache.get(key);
  if (found === undefined) {
    const perMs = bytesPerMs(audio);
    found = {
      format: audio,
      bytesPerMs: perMs,
      frameBytes: 20 * perMs,
      voice: convertVoice(voice24k, audio),
      peak: peakOf(audio),
    };
    cache.set(key, found);
  }
  return found;
}

function peakOf(audio: VoiceAudioFormat): (chunk: Buffer) => number {
  if (audio.format === 'pcm16') return (chunk) => peakLevel(chunk);
  const table = audio.format === 'pcmu' ? MULAW_TO_LINEAR : ALAW_TO_LINEAR;
  return (chunk) => {
    let peak = 0;
    for (let i = 0; i < chunk.length; i++) {
      const v = table[chunk[i]!]!;
      const a = v < 0 ? -v : v;
      if (a > peak) peak = a;
    }
    return peak;
  };
}

/** Peak absolute sample of a PCM16LE chunk. */
export function peakLevel(pcm: Buffer, start = 0, end = pcm.length): number {
  let peak = 0;
  for (let i = start; i + 1 < end; i += 2) {
    const v = pcm.readInt16LE(i);
    const a = v < 0 ? -v : v;
    if (a > peak) peak = a;
  }
  return peak;
}

/** PCM16 24 kHz -> the format (linear interpolation to the rate, then G.711 where asked). */
function convertVoice(pcm24k: Buffer, audio: VoiceAudioFormat): Buffer {
  if (audio.format === 'pcm16' && audio.sampleRateHz === 24000) return pcm24k;
  const inSamples = pcm24k.length >> 1;
  const outSamples = Math.floor((inSamples * audio.sampleRateHz) / 24000);
  const ratio = 24000 / audio.sampleRateHz;
  const sampleAt = (i: number): number => {
    const x = i * ratio;
    const j = Math.floor(x);
    const a = pcm24k.readInt16LE(Math.min(j, inSamples - 1) * 2);
    const b = pcm24k.readInt16LE(Math.min(j + 1, inSamples - 1) * 2);
    return Math.round(a + (b - a) * (x - j));
  };
  if (audio.format === 'pcm16') {
    const out = Buffer.alloc(outSamples * 2);
    for (let i = 0; i < outSamples; i++) out.writeInt16LE(sampleAt(i), i * 2);
    return out;
  }
  const encode = audio.format === 'pcmu' ? linearToMulaw : linearToAlaw;
  const out = Buffer.alloc(outSamples);
  for (let i = 0; i < outSamples; i++) out[i] = encode(sampleAt(i));
  return out;
}
