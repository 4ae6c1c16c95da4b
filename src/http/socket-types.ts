import type { Logger } from '../log/index.js';
import type { Reply } from './types.js';

/** What a capability sees of a WebSocket: no uWS types leak out of src/http. */
export interface RealtimeSocket<U> {
  readonly data: U;
  readonly closed: boolean;
  /**
   * Sends one message. "sent": written; "backpressure": buffered, wait for drain before sending more;
   * "dropped": over the socket's backpressure limit and not sent (or the socket is closed).
   */
  send(message: string | Uint8Array, binary: boolean): 'sent' | 'backpressure' | 'dropped';
  /** Bytes waiting in the socket's send buffer. */
  bufferedAmount(): number;
  /** Batch several sends into one syscall. */
  cork(fn: () => void): void;
  /** Graceful close with a close frame. */
  end(code?: number, reason?: string): void;
  /** Immediate close without a close frame. */
  terminate(): void;
}

export interface UpgradeRequest {
  readonly requestId: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly query: Record<string, string | string[]>;
  readonly params: Record<string, string>;
  readonly headers: Readonly<Record<string, string>>;
  readonly ip: string;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

export type SocketDecision<U> = { accept: U } | { refuse: Reply };

/** The upgrade seam the voice relay plugs into. */
export interface SocketRoute<U> {
  path: string;
  /** Largest message accepted; a bigger one closes the socket (uWS). */
  maxPayloadLength: number;
  /** Bytes buffered per socket before sends are dropped. */
  maxBackpressure: number;
  idleTimeoutSeconds: number;
  /**
   * Authenticate before upgrading: accept with per-socket data, or refuse with an ordinary HTTP reply. A decision
   * returned synchronously (not a promise) is applied inside uWS's own upgrade callback: prefer it when the answer
   * is known without waiting (the async path has to upgrade inside res.cork, which a uWS bug can close at once).
   */
  upgrade(req: UpgradeRequest): SocketDecision<U> | Promise<SocketDecision<U>>;
  open(socket: RealtimeSocket<U>): void;
  /** `data` is valid only during this call (uWS neuters it): copy or consume synchronously. */
  message(socket: RealtimeSocket<U>, data: ArrayBuffer, binary: boolean): void;
  drain?(socket: RealtimeSocket<U>): void;
  close(socket: RealtimeSocket<U>, code: number, reason: string): void;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnySocketRoute = SocketRoute<any>;
