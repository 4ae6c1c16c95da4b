/**
 * Parley's media format (parley.voice.v1): PCM16LE, mono, 24 kHz. 20 ms = 960 bytes. Browser-safe helpers to read
 * a WAV file's samples and to make synthetic input (tones, noise, speech-like bursts).
 */
import { fromPcm16, toPcm16 } from './formats.js';

export const SAMPLE_RATE_HZ = 24_000;
export const BYTES_PER_SECOND = SAMPLE_RATE_HZ * 2;
export const BYTES_PER_MS = BYTES_PER_SECOND / 1000;
export const FRAME_MS = 20;
export const FRAME_BYTES = FRAME_MS * BYTES_PER_MS;

export interface WavFormat {
  audioFormat: number;
  channels: number;
  sampleRateHz: number;
  bitsPerSample: number;
}

/**
 * The samples of a WAV file as PCM16 mono 24 kHz, Parley's media format: PCM16 at any rate from 8 to 48 kHz or G.711
 * (μ-law or A-law, as phone recordings are kept), one or more channels (averaged to one), resampled by linear
 * interpolation. A file already in the media format is returned as a view, without a copy. Anything else throws with
 * a message that says what it was and how to convert it.
 */
export function pcmFromWav(file: Uint8Array, name = 'the input'): Uint8Array {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const ascii = (at: number) => String.fromCharCode(file[at]!, file[at + 1]!, file[at + 2]!, file[at + 3]!);
  if (file.byteLength < 12 || ascii(0) !== 'RIFF' || ascii(8) !== 'WAVE') throw new Error(`${name} is not a WAV file`);
  let offset = 12;
  let format: WavFormat | undefined;
  while (offset + 8 <= file.byteLength) {
    const id = ascii(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= file.byteLength) {
      format = {
        audioFormat: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        sampleRateHz: view.getUint32(body + 4, true),
        bitsPerSample: view.getUint16(body + 14, true),
      };
    }
    if (id === 'data') {
      const end = Math.min(file.byteLength, body + size);
      return toMediaFormat(file.subarray(body, end), format, name);
    }
    offset = body + size + (size & 1);
  }
  throw new Error(`${name} has no data chunk`);
}

const WAV_PCM = 1;
const WAV_ALAW = 6;
const WAV_MULAW = 7;

function toMediaFormat(data: Uint8Array, format: WavFormat | undefined, name: string): Uint8Array {
  const sampleBytes =
    format?.audioFormat === WAV_PCM && format.bitsPerSample === 16
      ? 2
      : (format?.audioFormat === WAV_MULAW || format?.audioFormat === WAV_ALAW) && format.bitsPerSample === 8
        ? 1
        : 0;
  if (
    format === undefined ||
    sampleBytes === 0 ||
    format.channels < 1 ||
    format.sampleRateHz < 8000 ||
    format.sampleRateHz > 48_000
  ) {
    throw new Error(
      `${name} must be 16-bit PCM or G.711 (μ-law, A-law) at 8-48 kHz (got ${format ? `format ${format.audioFormat}, ${format.bitsPerSample}-bit, ${format.channels} channel(s), ${format.sampleRateHz} Hz` : 'no fmt chunk'}); ` +
        'convert it, e.g. ffmpeg -i in.wav -ac 1 -ar 24000 -c:a pcm_s16le out.wav',
    );
  }
  const frameBytes = sampleBytes * format.channels;
  const whole = data.subarray(0, data.byteLength - (data.byteLength % frameBytes));
  if (sampleBytes === 2 && format.channels === 1 && format.sampleRateHz === SAMPLE_RATE_HZ) return whole;
  // One channel of PCM16 at the file's rate, then resampled.
  const linear =
    sampleBytes === 1
      ? toPcm16(whole, { format: format.audioFormat === WAV_MULAW ? 'pcmu' : 'pcma', sampleRateHz: 8000 })
      : whole;
  const mono = format.channels === 1 ? linear : downmix(linear, format.channels);
  return fromPcm16(mono, { format: 'pcm16', sampleRateHz: SAMPLE_RATE_HZ }, format.sampleRateHz);
}

/** Interleaved PCM16 of `channels` channels -> their average, one channel. */
function downmix(pcm: Uint8Array, channels: number): Uint8Array {
  const input = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const frames = Math.floor(pcm.byteLength / (2 * channels));
  const out = new Uint8Array(frames * 2);
  const output = new DataView(out.buffer);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += input.getInt16((f * channels + c) * 2, true);
    output.setInt16(f * 2, Math.round(sum / channels), true);
  }
  return out;
}

/** A 44-byte WAV header for `dataBytes` of PCM16 at 24 kHz. */
export function wavHeader(dataBytes: number, channels = 1): Uint8Array {
  const header = new Uint8Array(44);
  const view = new DataView(header.buffer);
  const put = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) header[at + i] = text.charCodeAt(i);
  };
  put(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  put(8, 'WAVEfmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, SAMPLE_RATE_HZ, true);
  view.setUint32(28, SAMPLE_RATE_HZ * 2 * channels, true);
  view.setUint16(32, 2 * channels, true);
  view.setUint16(34, 16, true);
  put(36, 'data');
  view.setUint32(40, dataBytes, true);
  return header;
}

/** A deterministic pseudo-random source (mulberry32), so synthetic input is the same for the same seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Synthetic "speech": `utterances` bursts of voiced sound (a few harmonics of a wavering pitch with some noise,
 * loud enough for a voice-activity detector) of `speechMs` each, every one followed by `pauseMs` of silence, so a
 * provider hears turns and answers them. Deterministic for a seed.
 */
export function syntheticSpeech(
  options: { utterances?: number; speechMs?: number; pauseMs?: number; seed?: number } = {},
): Uint8Array {
  const utterances = options.utterances ?? 1;
  const speechSamples = Math.round(((options.speechMs ?? 1200) / 1000) * SAMPLE_RATE_HZ);
  const pauseSamples = Math.round(((options.pauseMs ?? 800) / 1000) * SAMPLE_RATE_HZ);
  const total = utterances * (speechSamples + pauseSamples);
  const out = new Uint8Array(total * 2);
  const view = new DataView(out.buffer);
  const rand = random(options.seed ?? 1);
  let phase = 0;
  for (let u = 0; u < utterances; u++) {
    const base = u * (speechSamples + pauseSamples);
    const pitch = 110 + rand() * 90;
    for (let i = 0; i < speechSamples; i++) {
      const t = i / SAMPLE_RATE_HZ;
      const f = pitch * (1 + 0.08 * Math.sin(2 * Math.PI * 3 * t));
      phase += (2 * Math.PI * f) / SAMPLE_RATE_HZ;
      const syllable = 0.55 + 0.45 * Math.abs(Math.sin(Math.PI * 4 * t));
      const voiced = Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.25 * Math.sin(3 * phase);
      const sample = (voiced * 0.55 + (rand() - 0.5) * 0.15) * syllable * 14_000;
      view.setInt16((base + i) * 2, Math.max(-32768, Math.min(32767, Math.round(sample))), true);
    }
  }
  return out;
}

/** A pure tone (sine) of `ms` at `hz` and `amplitude` (0..1). */
export function tone(ms: number, hz = 440, amplitude = 0.3): Uint8Array {
  const samples = Math.round((ms / 1000) * SAMPLE_RATE_HZ);
  const out = new Uint8Array(samples * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples; i++)
    view.setInt16(i * 2, Math.round(Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE_HZ) * amplitude * 32767), true);
  return out;
}
