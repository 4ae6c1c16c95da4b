import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { asDependencyFailure, isAppError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { errorBody, internalError } from './errors.js';
import { copyRequest, parseQuery, pickRequestId } from './request.js';
import type { AnySocketRoute, RealtimeSocket, SocketDecision } from './socket-types.js';
import { ResponseState, writeReply } from './writer.js';

interface SocketEnv {
  log: Logger;
  trustProxy: boolean;
  newRequestId: () => string;
  shutdownSignal: AbortSignal;
}

/** Per-connection holder: uWS user data carries it, and the capability sees only the RealtimeSocket. */
class UwsRealtimeSocket<U> implements RealtimeSocket<U> {
  closed = false;
  ws: WebSocket<{ holder: UwsRealtimeSocket<U> }> | undefined;
  constructor(readonly data: U) {}

  send(message: string | Uint8Array, binary: boolean): 'sent' | 'backpressure' | 'dropped' {
    if (this.closed || !this.ws) return 'dropped';
    const status = this.ws.send(message, binary, false);
    return status === 1 ? 'sent' : status === 0 ? 'backpressure' : 'dropped';
  }
  bufferedAmount(): number {
    return this.closed || !this.ws ? 0 : this.ws.getBufferedAmount();
  }
  cork(fn: () => void): void {
    if (this.closed || !this.ws) return;
    this.ws.cork(fn);
  }
  end(code = 1000, reason = ''): void {
    if (this.closed || !this.ws) return;
    this.ws.end(code, reason);
  }
  terminate(): void {
    if (this.closed || !this.ws) return;
    this.ws.close();
  }
}

/**
 * Registers a WebSocket route. The upgrade is asynchronous (authentication), so the request is copied
 * and onAborted armed first, and the upgrade itself is corked (docs/house-rules.md rules 14-16).
 */
export function attachSocketRoute(app: TemplatedApp, route: AnySocketRoute, env: SocketEnv): void {
  const paramNames = route.path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
  const open = new Set<UwsRealtimeSocket<unknown>>();
  env.shutdownSignal.addEventListener(
    'abort',
    () => {
      for (const socket of open) socket.end(1001, 'server shutting down');
    },
    { once: true },
  );

  app.ws<{ holder: UwsRealtimeSocket<unknown> }>(route.path, {
    maxPayloadLength: route.maxPayloadLength,
    maxBackpressure: route.maxBackpressure,
    idleTimeout: route.idleTimeoutSeconds,
    closeOnBackpressureLimit: false,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      const copied = copyRequest(res, req, paramNames.length, env.trustProxy);
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const state = new ResponseState(res);
      res.onAborted(() => state.markAborted());
      const requestId = pickRequestId(copied.headers['x-request-id'], env.newRequestId);
      const params: Record<string, string> = {};
      paramNames.forEach((name, i) => {
        try {
          params[name] = decodeURIComponent(copied.params[i] ?? '');
        } catch {
          params[name] = '';
        }
      });
      const log = env.log.child({ requestId, route: route.path });
      const common = { 'x-request-id': requestId };
      const apply = (decision: SocketDecision<unknown>, inCallback: boolean): void => {
        if (!state.open) return;
        if ('refuse' in decision) {
          if (decision.refuse.kind === 'stream' || decision.refuse.kind === 'sized')
            throw new Error('a refused upgrade cannot stream');
          writeReply(state, decision.refuse, common, []);
          return;
        }
        state.finished = true;
        const holder = new UwsRealtimeSocket(decision.accept);
        // Inside uWS's upgrade callback the upgrade is plain (uWS corks and tracks it itself). After an await it must
        // be corked, and uWS 20.0.8's cork can then close the new socket at once (uNetworking/uWebSockets#1928).
        if (inCallback) res.upgrade({ holder }, key, protocol, extensions, context);
        else res.cork(() => res.upgrade({ holder }, key, protocol, extensions, context));
      };
      const fail = (err: unknown): void => {
        if (!state.open) return;
        const appErr = isAppError(err) ? err : (asDependencyFailure(err) ?? internalError());
        if (appErr.status >= 500 && !isAppError(err)) log.error({ err }, 'websocket upgrade failed');
        writeReply(
          state,
          {
            kind: 'json',
            status: appErr.status,
            body: errorBody(appErr, requestId),
            ...(appErr.headers ? { headers: appErr.headers } : {}),
          },
          common,
          [],
        );
      };
      let decided: SocketDecision<unknown> | Promise<SocketDecision<unknown>>;
      try {
        decided = route.upgrade({
          requestId,
          path: copied.path,
          rawQuery: copied.rawQuery,
          query: parseQuery(copied.rawQuery),
          params,
          headers: copied.headers,
          ip: copied.ip,
          signal: state.controller.signal,
          log,
        });
      } catch (err) {
        fail(err);
        return;
      }
      if (!(decided instanceof Promise)) {
        try {
          apply(decided, true);
        } catch (err) {
          fail(err);
        }
        return;
      }
      decided.then((decision) => apply(decision, false)).catch(fail);
    },
    open: (ws) => {
      const holder = ws.getUserData().holder;
      holder.ws = ws;
      open.add(holder);
      route.open(holder);
    },
    message: (ws, message, isBinary) => {
      route.message(ws.getUserData().holder, message, isBinary);
    },
    drain: (ws) => {
      route.drain?.(ws.getUserData().holder);
    },
    close: (ws, code, message) => {
      const holder = ws.getUserData().holder;
      holder.closed = true;
      open.delete(holder);
      route.close(holder, code, Buffer.from(message).toString('utf8'));
    },
  });
}
