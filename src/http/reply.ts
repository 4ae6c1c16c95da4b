import type { Reply, StreamSink } from './types.js';

/** Reply constructors: handlers return values; the shell writes them in one corked call. */
export const reply = {
  json(body: unknown, status = 200, headers?: Record<string, string>): Reply {
    return headers ? { kind: 'json', status, body, headers } : { kind: 'json', status, body };
  },
  empty(status = 204, headers?: Record<string, string>): Reply {
    return headers ? { kind: 'empty', status, headers } : { kind: 'empty', status };
  },
  bytes(body: string | Uint8Array, contentType: string, status = 200, headers?: Record<string, string>): Reply {
    return headers
      ? { kind: 'bytes', status, body, contentType, headers }
      : { kind: 'bytes', status, body, contentType };
  },
  /** NDJSON: one JSON value per line (application/x-ndjson). */
  ndjson(run: (sink: StreamSink) => Promise<void>, headers?: Record<string, string>): Reply {
    return {
      kind: 'stream',
      status: 200,
      contentType: 'application/x-ndjson',
      headers: { 'cache-control': 'no-store', ...headers },
      run,
    };
  },
  /** Server-Sent Events (text/event-stream). */
  sse(run: (sink: StreamSink) => Promise<void>, headers?: Record<string, string>): Reply {
    return {
      kind: 'stream',
      status: 200,
      contentType: 'text/event-stream; charset=utf-8',
      headers: { 'cache-control': 'no-store', 'x-accel-buffering': 'no', ...headers },
      run,
    };
  },
};

export function ndjsonLine(value: unknown): string {
  return JSON.stringify(value) + '\n';
}

/** One SSE event; multi-line data is split per the EventSource spec. */
export function sseEvent(event: string, data: unknown): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return `event: ${event}\ndata: ${text.split('\n').join('\ndata: ')}\n\n`;
}
