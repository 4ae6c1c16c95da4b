import { connect } from 'node:net';

/** What came back for one raw request: the status line's code (undefined when the server closed without answering). */
export interface RawAnswer {
  status: number | undefined;
  /** Raw header block (lower-cased names), when an answer arrived. */
  headers: Record<string, string>;
  body: Buffer;
  /** The server closed the connection (after or without an answer). */
  closed: boolean;
  /** The deadline passed with the exchange unfinished: neither a complete answer nor a close. */
  timedOut: boolean;
  elapsedMs: number;
}

export interface RawRequest {
  /** Bytes written at once. */
  bytes: Buffer;
  /** After writing: 'end' half-closes (a truncated body ends the stream), 'hold' keeps the socket open and silent. */
  after: 'end' | 'hold' | 'wait';
}

/**
 * Sends exact bytes over one TCP connection (node:net, so malformed request lines, duplicate headers and truncated
 * bodies reach the server as written) and reads one HTTP/1.1 answer: complete when Content-Length bytes or the last
 * chunk arrived, or when the server closes. Never waits past `deadlineMs`.
 */
export function sendRaw(port: number, request: RawRequest, deadlineMs: number): Promise<RawAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let buffer = Buffer.alloc(0);
    let settled = false;
    const finish = (closed: boolean, timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseAnswer(buffer), closed, timedOut, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false, true), deadlineMs);
    socket.on('connect', () => {
      socket.write(request.bytes);
      if (request.after === 'end') socket.end();
    });
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (isComplete(buffer)) finish(false, false);
    });
    socket.on('end', () => finish(true, false));
    socket.on('close', () => finish(true, false));
    socket.on('error', () => finish(true, false));
  });
}

function headerEnd(buffer: Buffer): number {
  return buffer.indexOf('\r\n\r\n');
}

function parseHead(head: string): { status: number | undefined; headers: Record<string, string> } {
  const lines = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: m ? Number(m[1]) : undefined, headers };
}

function isComplete(buffer: Buffer): boolean {
  const end = headerEnd(buffer);
  if (end < 0) return false;
  const { status, headers } = parseHead(buffer.subarray(0, end).toString('latin1'));
  const body = buffer.subarray(end + 4);
  if (status !== undefined && (status === 204 || status === 304 || (status >= 100 && status < 200))) return true;
  // A stream (NDJSON gate, SSE) lasts as long as its subject: its head is the answer.
  if (/ndjson|event-stream/i.test(headers['content-type'] ?? '')) return true;
  if (headers['content-length'] !== undefined) return body.length >= Number(headers['content-length']);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) return body.includes(Buffer.from('0\r\n\r\n'));
  return false; // read until close
}

function parseAnswer(buffer: Buffer): Pick<RawAnswer, 'status' | 'headers' | 'body'> {
  const end = headerEnd(buffer);
  if (end < 0) {
    const { status } = parseHead(buffer.toString('latin1'));
    return { status, headers: {}, body: Buffer.alloc(0) };
  }
  const { status, headers } = parseHead(buffer.subarray(0, end).toString('latin1'));
  return { status, headers, body: buffer.subarray(end + 4) };
}

/** Builds request bytes; header values may repeat (pairs), the body is sent as given. */
export function buildRaw(options: {
  requestLine: string;
  headers: Array<[string, string]>;
  body?: Buffer | string;
  contentLength?: number | 'omit';
}): Buffer {
  const body =
    options.body === undefined
      ? Buffer.alloc(0)
      : Buffer.isBuffer(options.body)
        ? options.body
        : Buffer.from(options.body, 'utf8');
  const lines = [options.requestLine, ...options.headers.map(([k, v]) => `${k}: ${v}`)];
  if (options.contentLength !== 'omit') lines.push(`content-length: ${options.contentLength ?? body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

/** A shell line that replays the exact bytes (for failure reports). */
export function replayLine(bytes: Buffer, port: number | string = '$PORT'): string {
  return `node -e 'const s=require("net").connect(${port},"127.0.0.1",()=>s.write(Buffer.from("${bytes.toString('base64')}","base64")));s.pipe(process.stdout)'`;
}
