import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Reply } from './types.js';

/** A parsed `Range: bytes=...` header against a body of `size` bytes (RFC 9110 §14). */
export type RangeRequest =
  { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One byte range, or the whole body. Forms: `bytes=a-b`, `bytes=a-`, `bytes=-n` (the last n bytes). A header this
 * does not understand (another unit, several ranges, garbage) is ignored and the whole body is sent, as RFC 9110
 * allows; a well-formed range that starts past the end is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'full' };
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (match === null) return { kind: 'full' };
  const [, from, to] = match;
  if (from === '' && to === '') return { kind: 'full' };
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (end < start) return { kind: 'full' };
  return { kind: 'partial', start, end };
}

export interface FileReplyOptions {
  contentType: string;
  /** The request's Range header. */
  range?: string | undefined;
  headers?: Record<string, string>;
  /** Read size per chunk (default 64 KiB). */
  chunkBytes?: number;
}

/**
 * Serves a file (or one byte range of it) without loading it: 200 with Accept-Ranges, 206 with Content-Range, or 416
 * with `Content-Range: bytes * /size`. The body is read in chunks and written with backpressure (a `sized` reply).
 * Resolves null when the file does not exist.
 */
export async function fileReply(path: string, options: FileReplyOptions): Promise<Reply | null> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) return null;
    size = info.size;
  } catch {
    return null;
  }
  const base = { 'accept-ranges': 'bytes', ...options.headers };
  const range = parseRange(options.range, size);
  if (range.kind === 'unsatisfiable') {
    return { kind: 'empty', status: 416, headers: { ...base, 'content-range': `bytes */${size}` } };
  }
  const start = range.kind === 'partial' ? range.start : 0;
  const end = range.kind === 'partial' ? range.end : size - 1;
  const length = size === 0 ? 0 : end - start + 1;
  const headers = range.kind === 'partial' ? { ...base, 'content-range': `bytes ${start}-${end}/${size}` } : base;
  const highWaterMark = options.chunkBytes ?? 64 * 1024;
  return {
    kind: 'sized',
    status: range.kind === 'partial' ? 206 : 200,
    contentType: options.contentType,
    length,
    headers,
    run: async (sink) => {
      if (length === 0) return;
      const stream = createReadStream(path, { start, end, highWaterMark });
      try {
        for await (const chunk of stream) {
          if (!(await sink.write(chunk as Buffer))) break;
        }
      } finally {
        stream.destroy();
      }
    },
  };
}
