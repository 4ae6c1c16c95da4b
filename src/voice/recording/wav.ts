/** RIFF/WAVE header for 16-bit PCM (44 bytes). `dataBytes` is the size of the sample data that follows. */
export function wavHeader(dataBytes: number, channels: number, sampleRateHz = 24_000): Buffer {
  const blockAlign = channels * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRateHz, 24);
  header.writeUInt32LE(sampleRateHz * blockAlign, 28);
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

export const WAV_HEADER_BYTES = 44;

/** Parse the fields of a 44-byte PCM WAV header (tests and the example client). */
export function readWavHeader(
  buf: Buffer,
): { channels: number; sampleRateHz: number; bitsPerSample: number; dataBytes: number; dataOffset: number } | null {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return null;
  let offset = 12;
  let fmt: { channels: number; sampleRateHz: number; bitsPerSample: number } | undefined;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= buf.length) {
      fmt = {
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
