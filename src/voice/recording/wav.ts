import { DEFAULT_AUDIO_FORMAT, wavFormatOf, type VoiceAudioFormat } from '../../providers/voice/index.js';

/**
 * RIFF/WAVE header for the call's audio: 44 bytes for PCM16; for G.711 (μ-law format 7, A-law 6) the extended
 * 18-byte fmt chunk and the fact chunk that non-PCM WAVs carry (58 bytes), so players open it as it was heard.
 * `dataBytes` is the size of the sample data that follows.
 */
export function wavHeader(dataBytes: number, channels: number, audio: VoiceAudioFormat = DEFAULT_AUDIO_FORMAT): Buffer {
  const { formatTag, bitsPerSample } = wavFormatOf(audio);
  const sampleRateHz = audio.sampleRateHz;
  const blockAlign = (channels * bitsPerSample) / 8;
  const pcm = formatTag === 1;
  const fmtBytes = pcm ? 16 : 18;
  const headerBytes = pcm ? 44 : 58;
  const header = Buffer.alloc(headerBytes);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(headerBytes - 8 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(fmtBytes, 16);
  header.writeUInt16LE(formatTag, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRateHz, 24);
  header.writeUInt32LE(sampleRateHz * blockAlign, 28);
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(bitsPerSample, 34);
  let at = 36;
  if (!pcm) {
    header.writeUInt16LE(0, 36); // cbSize: no extension
    header.write('fact', 38, 'ascii');
    header.writeUInt32LE(4, 42);
    header.writeUInt32LE(dataBytes / blockAlign, 46); // samples per channel
    at = 50;
  }
  header.write('data', at, 'ascii');
  header.writeUInt32LE(dataBytes, at + 4);
  return header;
}

/** The header size of a PCM16 recording. */
export const WAV_HEADER_BYTES = 44;

/** Parse the fields of a WAV header (tests and the example client); `formatTag` 1 PCM, 6 A-law, 7 μ-law. */
export function readWavHeader(buf: Buffer): {
  formatTag: number;
  channels: number;
  sampleRateHz: number;
  bitsPerSample: number;
  dataBytes: number;
  dataOffset: number;
} | null {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return null;
  let offset = 12;
  let fmt: { formatTag: number; channels: number; sampleRateHz: number; bitsPerSample: number } | undefined;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= buf.length) {
      fmt = {
        formatTag: buf.readUInt16LE(body),
        channels: buf.readUInt16LE(body + 2),
        sampleRateHz: buf.readUInt32LE(body + 4),
        bitsPerSample: buf.readUInt16LE(body + 14),
      };
    } else if (id === 'data' && fmt !== undefined) {
      return { ...fmt, dataBytes: size, dataOffset: body };
    }
    offset = body + size + (size & 1);
  }
  return null;
}
