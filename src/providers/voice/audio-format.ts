import type { AudioFormat as ProviderAudioFormat } from 'openai/resources/live/live';

/**
 * The audio a call carries, chosen at mint and passed through unchanged to the provider's Live WebSocket, which
 * accepts mono PCM16LE at 16 or 24 kHz and G.711 (μ-law `pcmu`, A-law `pcma`) at 8 kHz. Parley never resamples
 * or transcodes on the hot path: frame limits, durations and recordings are computed in the call's own format.
 */
export type VoiceAudioFormat =
  | { format: 'pcm16'; sampleRateHz: 16000 | 24000 }
  | { format: 'pcmu'; sampleRateHz: 8000 }
  | { format: 'pcma'; sampleRateHz: 8000 };

export type VoiceAudioEncoding = VoiceAudioFormat['format'];

/** What a call carries when the mint names no format (what every client before formats existed sends). */
export const DEFAULT_AUDIO_FORMAT: Readonly<VoiceAudioFormat> = Object.freeze({ format: 'pcm16', sampleRateHz: 24000 });

/** Bytes of one sample: 2 for PCM16, 1 for G.711. Frames must hold whole samples. */
export function bytesPerSample(audio: VoiceAudioFormat): 1 | 2 {
  return audio.format === 'pcm16' ? 2 : 1;
}

/** Bytes of one millisecond of audio (48 for PCM16 at 24 kHz, 32 at 16 kHz, 8 for G.711). */
export function bytesPerMs(audio: VoiceAudioFormat): number {
  return (audio.sampleRateHz * bytesPerSample(audio)) / 1000;
}

/** The format as the provider's `session.start` names it. */
export function providerAudioFormat(audio: VoiceAudioFormat): ProviderAudioFormat {
  switch (audio.format) {
    case 'pcm16':
      return { type: 'audio/pcm', rate: audio.sampleRateHz };
    case 'pcmu':
      return { type: 'audio/pcmu', rate: 8000 };
    case 'pcma':
      return { type: 'audio/pcma', rate: 8000 };
  }
}

/** The inverse of {@link providerAudioFormat}; the default for a missing or unknown format. */
export function audioFormatOfProvider(format: ProviderAudioFormat | undefined): VoiceAudioFormat {
  if (format?.type === 'audio/pcmu') return { format: 'pcmu', sampleRateHz: 8000 };
  if (format?.type === 'audio/pcma') return { format: 'pcma', sampleRateHz: 8000 };
  if (format?.type === 'audio/pcm' && format.rate === 16000) return { format: 'pcm16', sampleRateHz: 16000 };
  return { ...DEFAULT_AUDIO_FORMAT };
}

/** The byte that encodes silence: 0 for PCM16, 0xFF for μ-law, 0xD5 for A-law. */
export function silenceByte(audio: VoiceAudioFormat): number {
  return audio.format === 'pcmu' ? 0xff : audio.format === 'pcma' ? 0xd5 : 0;
}

/** WAVE format tag of the samples (1 PCM, 6 A-law, 7 μ-law) and their bit depth. */
export function wavFormatOf(audio: VoiceAudioFormat): { formatTag: 1 | 6 | 7; bitsPerSample: 8 | 16 } {
  if (audio.format === 'pcmu') return { formatTag: 7, bitsPerSample: 8 };
  if (audio.format === 'pcma') return { formatTag: 6, bitsPerSample: 8 };
  return { formatTag: 1, bitsPerSample: 16 };
}

/** The largest staged append in the session's format, when the adapter coalesces caller audio. */
export function stagingOf(
  deps: { appendFlusher?: { stagingBytesOf(bytesPerMs: number, sampleBytes: number): number } | undefined },
  config: { audio?: VoiceAudioFormat | undefined },
): number | undefined {
  const audio = config.audio ?? DEFAULT_AUDIO_FORMAT;
  return deps.appendFlusher?.stagingBytesOf(bytesPerMs(audio), bytesPerSample(audio));
}
