import { parseRange, type Reply } from '../../http/index.js';
import type { StoredRecording } from './store/index.js';

/**
 * A stored recording (or one byte range of it) as an audio/wav answer, never loaded whole: 200 with Accept-Ranges,
 * 206 with Content-Range, or 416 with `Content-Range: bytes * /size`, written with backpressure.
 */
export function recordingReply(
  recording: StoredRecording,
  rangeHeader: string | undefined,
  headers: Record<string, string>,
): Reply {
  const size = recording.size;
  const base = { 'accept-ranges': 'bytes', ...headers };
  const range = parseRange(rangeHeader, size);
  if (range.kind === 'unsatisfiable') {
    return { kind: 'empty', status: 416, headers: { ...base, 'content-range': `bytes */${size}` } };
  }
  const start = range.kind === 'partial' ? range.start : 0;
  const end = range.kind === 'partial' ? range.end : size - 1;
  const length = size === 0 ? 0 : end - start + 1;
  return {
    kind: 'sized',
    status: range.kind === 'partial' ? 206 : 200,
    contentType: 'audio/wav',
    length,
    headers: range.kind === 'partial' ? { ...base, 'content-range': `bytes ${start}-${end}/${size}` } : base,
    run: async (sink) => {
      if (length === 0) return;
      for await (const chunk of recording.read(start, end)) {
        if (!(await sink.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)))) break;
      }
    },
  };
}
