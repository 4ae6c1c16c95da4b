import { connect, type Socket } from 'node:net';
import { AppError, dependencyUnavailable } from '../errors/index.js';

/** The errors this module's sockets fail with: each means the connection is gone (see {@link isConnectionLost}). */
const lostConnection = new WeakSet<object>();

function lost(cause: unknown): AppError {
  const error = dependencyUnavailable('database', cause);
  lostConnection.add(error);
  return error;
}

/**
 * True when `error` says the connection a statement ran on is gone (closed, reset, cut by the deadline): the server
 * has rolled back whatever transaction it held, and postgres.js has already reused the connection for other work.
 */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (lostConnection.has(error)) return true;
  // A FATAL error from the server (the backend was terminated, the server shuts down) closes the connection too.
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  if (severity === 'FATAL' || severity === 'PANIC') return true;
  return typeof code === 'string' && /^(CONNECTION_(CLOSED|DESTROYED|ENDED)|CONNECT_TIMEOUT)$/.test(code);
}

/** What postgres.js hands its `socket` option (its parsed connection options). */
interface SocketTarget {
  host: string[];
  port: number[];
  path?: string | false;
}

/**
 * The client-level SQL deadline (docs/house-rules.md rule 18: a stalled dependency is a 503, never a hang). postgres.js
 * has no per-query timeout, and a server that stops answering (a partition, a stalled proxy, a frozen host) leaves
 * every query on that connection pending forever: requests hang. This socket factory gives each connection a deadline
 * instead: once Parley has written to the server, the first bytes of an answer must arrive within `timeoutMs`, else the
 * connection is destroyed with the 503 `DEPENDENCY_UNAVAILABLE` error, which rejects every query on it (postgres.js
 * then reconnects for the next one). Connecting has the same deadline. Socket errors (refused, reset) reject queries
 * with the same 503 error.
 *
 * What it measures is "time to the first byte of an answer", so a statement that legitimately runs longer than
 * the deadline is cut too: the deadline is also the longest statement Parley runs on a request path. Over TLS
 * postgres.js wraps the socket itself; there the deadline covers connecting only.
 */
export function deadlineSocket(timeoutMs: number): (target: SocketTarget) => Promise<Socket> {
  return (target) =>
    new Promise<Socket>((resolve) => {
      const socket =
        typeof target.path === 'string' && target.path !== ''
          ? connect(target.path)
          : connect(target.port[0] ?? 5432, target.host[0] ?? '127.0.0.1');
      socket.setNoDelay(true);
      // Every socket error reaches postgres.js as the 503 (it rejects the connection's queries with it).
      const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
      (socket as { emit: (event: string | symbol, ...args: unknown[]) => boolean }).emit = (event, ...args) =>
        event === 'error' && !lostConnection.has(args[0] as object)
          ? emit('error', lost(args[0]))
          : // 'drain' is dropped: postgres.js answers it by handing the connection back to its pool when no query is
            // in flight, even when the connection is reserved for a transaction between two statements (its queued
            // queries would then run inside that transaction). Every connection already returns to the pool when its
            // last answer arrives, so nothing waits for 'drain'.
            event === 'drain'
            ? false
            : emit(event, ...args);

      let lastWriteAt = 0;
      let lastReadAt = 0;
      const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
      (socket as { write: (...args: unknown[]) => boolean }).write = (...args) => {
        lastWriteAt = performance.now();
        return write(...args);
      };
      socket.on('data', () => {
        lastReadAt = performance.now();
      });
      // Inactivity (no read, no write) for timeoutMs. Only a fault when something we wrote is still unanswered;
      // an idle pooled connection is left alone.
      // (on, not setTimeout's callback: that one is registered once, and idle periods come back.)
      socket.setTimeout(timeoutMs);
      socket.on('timeout', () => {
        if (!socket.connecting && lastWriteAt <= lastReadAt) return;
        // Without an error listener (postgres.js detached it while closing) an emitted error would be thrown.
        if (socket.listenerCount('error') > 0)
          socket.destroy(lost(new Error(`PostgreSQL did not answer within ${timeoutMs} ms`)));
        else socket.destroy();
      });
      // Handed over while still connecting (postgres.js writes the startup message, which waits for the connection):
      // a factory that rejected would leave postgres.js's connection stuck in its connecting queue forever, so every
      // failure, connecting included, reaches postgres.js as this socket's own error and close.
      resolve(socket);
    });
}
