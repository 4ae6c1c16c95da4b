import { WebSocket } from 'ws';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { errorFromHttpStatus, type VoiceProviderError } from './errors.js';

/** What one provider socket reports to its session. Every callback names the socket, so stale ones are ignored. */
export interface ProviderSocketEvents {
  onOpen(ws: WebSocket): void;
  onMessage(ws: WebSocket, data: Buffer, isBinary: boolean): void;
  onPong(ws: WebSocket): void;
  /** The upgrade was answered with an HTTP status instead of 101; the socket is already torn down. */
  onRefused(ws: WebSocket, error: VoiceProviderError): void;
  onClose(ws: WebSocket, code: number): void;
  onError(ws: WebSocket, err: Error): void;
}

const MAX_REFUSAL_BODY = 4096;
const noop = (): void => {};

/**
 * Open one primary WebSocket. Compression is off (base64 audio barely compresses and deflate costs CPU per frame).
 * A refused upgrade's body (bounded) is read so a 4xx that names the data channel can count as an unconfirmed lock.
 */
export function openProviderSocket(
  url: string,
  headers: Record<string, string>,
  events: ProviderSocketEvents,
): WebSocket {
  // skipUTF8Validation: every text frame is JSON we parse (a bad byte turns into U+FFFD there, or fails the parse and
  // counts as garbage) or base64 read byte-wise; ws's per-frame UTF-8 scan was ~2% of the relay's profile.
  const ws = new WebSocket(url, {
    headers,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
    skipUTF8Validation: true,
  });
  ws.on('unexpected-response', (req: ClientRequest, res: IncomingMessage) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (body.length < MAX_REFUSAL_BODY) body += chunk.slice(0, MAX_REFUSAL_BODY - body.length);
    });
    res.on('error', noop);
    res.on('end', () => {
      req.destroy();
      ws.terminate();
      events.onRefused(ws, errorFromHttpStatus(res.statusCode ?? 0, body));
    });
  });
  ws.on('open', () => events.onOpen(ws));
  // binaryType is 'nodebuffer' (the default), so every message arrives as one Buffer.
  ws.on('message', (data, isBinary) => events.onMessage(ws, data as Buffer, isBinary));
  ws.on('pong', () => events.onPong(ws));
  ws.on('close', (code: number) => events.onClose(ws, code));
  // Errors always end in 'close'; the close handler decides.
  ws.on('error', (err: Error) => events.onError(ws, err));
  return ws;
}
