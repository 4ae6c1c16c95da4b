import { ParleyError } from '../errors.js';
import { abortableSleep } from '../sleep.js';
import type { WebSocketConstructor, WebSocketLike } from './types.js';

/** The media socket's URL: the minted `stream.url`, resolved against the base (the page, for ''), as ws: / wss:. */
export function mediaUrlOf(streamUrl: string, baseUrl: string): string {
  const base = baseUrl === '' ? (globalThis as { location?: { href: string } }).location?.href : baseUrl;
  const url = new URL(streamUrl, base);
  url.protocol = url.protocol === 'https:' || url.protocol === 'wss:' ? 'wss:' : 'ws:';
  return url.toString();
}

export interface MediaSocketEvents {
  /** The socket was created (before it opens): the call holds it from now on. */
  created(socket: WebSocketLike): void;
  opened(socket: WebSocketLike): void;
  message(data: unknown): void;
  /** A socket that had opened closed. Ignored by the caller when it no longer holds that socket. */
  closed(socket: WebSocketLike, code: number): void;
  /** A socket that never opened closed (before it could). */
  failed(socket: WebSocketLike): void;
}

/** Opens the media socket; resolves on open, rejects (MEDIA_CONNECT_FAILED) if it closes first. */
export function openMediaSocket(
  WebSocketImpl: WebSocketConstructor,
  url: string,
  on: MediaSocketEvents,
): Promise<WebSocketLike> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocketImpl(url);
    socket.binaryType = 'arraybuffer';
    on.created(socket);
    let opened = false;
    socket.onopen = () => {
      opened = true;
      on.opened(socket);
      resolve(socket);
    };
    socket.onmessage = (event: { data: unknown }) => on.message(event.data);
    socket.onerror = () => undefined; // the close that follows says what happened
    socket.onclose = (event: { code?: number; reason?: string }) => {
      if (opened) {
        on.closed(socket, event.code ?? 1006);
        return;
      }
      on.failed(socket);
      reject(
        new ParleyError({
          status: 0,
          code: 'MEDIA_CONNECT_FAILED',
          message: `the media socket closed before opening (${event.code ?? '?'})`,
        }),
      );
    };
  });
}

/** What a call counts (see VoiceCallStats), all zero. */
export function newCallStats() {
  return {
    startedAt: undefined,
    mintMs: undefined,
    connectMs: undefined,
    firstAudioMs: undefined,
    framesSent: 0,
    bytesSent: 0,
    bytesDroppedLocally: 0,
    assistantBytes: 0,
    assistantBytesMuted: 0,
    assistantDroppedMs: 0,
    gateDecisions: 0,
    heartbeats: 0,
    heartbeatFailures: 0,
    mediaReconnects: 0,
  };
}

const MEDIA_RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 4000];

/**
 * Reconnects a dropped media socket while the session lives: tries after 250 ms, 0.5, 1, 2 and 4 s. Resolves true
 * once `connect` succeeded, false when stopped (aborted or finished) or every try failed (then MEDIA_LOST is the
 * caller's to report).
 */
export async function reconnectMedia(
  connect: () => Promise<void>,
  signal: AbortSignal,
  on: { trying(): void; finished(): boolean },
): Promise<'connected' | 'stopped' | 'lost'> {
  for (const delay of MEDIA_RECONNECT_DELAYS_MS) {
    on.trying();
    try {
      await abortableSleep(delay, signal);
    } catch {
      return 'stopped';
    }
    if (on.finished()) return 'stopped';
    try {
      await connect();
      return 'connected';
    } catch {
      // try again after the next delay
    }
  }
  return 'lost';
}

/** The client of a call: API key or keyless (with the widget signature when given), deprecation notices muted. */
export function callClientOptions(options: {
  baseUrl: string;
  apiKey?: string | undefined;
  signature?: string | undefined;
  headers?: Record<string, string> | undefined;
  fetch?: typeof fetch | undefined;
}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey === undefined && options.signature !== undefined)
    headers['x-parley-signature'] = options.signature;
  return {
    baseUrl: options.baseUrl,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    onDeprecation: () => undefined,
  };
}

/** Closes a socket that may already be closing (normal close, reason `ended`). */
export function closeQuietly(socket: WebSocketLike | undefined): void {
  if (socket === undefined || socket.readyState > 1) return;
  try {
    socket.close(1000, 'ended');
  } catch {
    // already closing
  }
}

export function mediaLostError(): ParleyError {
  return new ParleyError({ status: 0, code: 'MEDIA_LOST', message: 'the media socket could not be reconnected' });
}

export interface MediaLinkEvents {
  message(data: unknown): void;
  /** Opened (first time or again after a drop). */
  opened(socket: WebSocketLike): void;
  /** An opened socket closed with `code` (1000 ended, 4001 replaced, anything else dropped). */
  closed(code: number): void;
  /** A dropped socket is being reconnected (true), or is back (false). */
  reconnecting(on: boolean): void;
  /** Every reconnect failed. */
  lost(): void;
  finished(): boolean;
}

/** The call's media socket: the current one (if any), opened and reconnected after a drop. */
export class MediaLink {
  socket: WebSocketLike | undefined;
  connected = false;
  reconnects = 0;

  constructor(
    private readonly WebSocketImpl: WebSocketConstructor,
    private readonly url: string,
    private readonly signal: AbortSignal,
    private readonly on: MediaLinkEvents,
  ) {}

  /** Opens the media socket; resolves on open, rejects if it closes first. */
  async connect(): Promise<void> {
    await openMediaSocket(this.WebSocketImpl, this.url, {
      created: (socket) => (this.socket = socket),
      opened: (socket) => {
        this.connected = true;
        this.on.opened(socket);
      },
      message: (data) => this.on.message(data),
      closed: (socket, code) => {
        if (this.forget(socket)) this.on.closed(code);
      },
      failed: (socket) => void this.forget(socket),
    });
  }

  /** Dropped (network): the session lives on at the service; reconnect while it does. */
  async reconnect(): Promise<void> {
    const result = await reconnectMedia(() => this.connect(), this.signal, {
      trying: () => this.on.reconnecting(true),
      finished: () => this.on.finished(),
    });
    if (result === 'connected') {
      this.reconnects++;
      this.on.reconnecting(false);
    } else if (result === 'lost') {
      this.on.lost();
    }
  }

  close(): void {
    const socket = this.socket;
    this.socket = undefined;
    this.connected = false;
    closeQuietly(socket);
  }

  /** The socket closed: forget it, if it is still the current one (true). */
  private forget(socket: WebSocketLike): boolean {
    if (this.socket !== socket) return false;
    this.connected = false;
    this.socket = undefined;
    return true;
  }
}
