import { randomBytes } from 'node:crypto';
import {
  App,
  us_listen_socket_close,
  us_socket_local_port,
  type HttpRequest,
  type HttpResponse,
  type TemplatedApp,
  type us_listen_socket,
} from 'uWebSockets.js';
import { AppError, HttpErrorCodes, isAppError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { errorBody } from './errors.js';
import {
  BodyAborted,
  bodyTooLarge,
  copyRequest,
  RequestView,
  decodeParams,
  parseQuery,
  pickRequestId,
  readBody,
  type CopiedRequest,
} from './request.js';
import { RequestCtx } from './context.js';
import { checkResponse, parseBody, parsePart } from './parse.js';
import { commonHeaders, errorReply, statusOfError, withHeaders } from './reply-helpers.js';
import { buildRouteTable, type PathEntry } from './route-table.js';
import { attachSocketRoute } from './socket.js';
import type { AnySocketRoute } from './socket-types.js';
import type { AnyRoute, Authenticator, HttpMethod, Reply } from './types.js';
import { ResponseState, writeReply, writeSized, writeStream } from './writer.js';

export interface HttpServerOptions {
  log: Logger;
  routes: AnyRoute[];
  sockets?: AnySocketRoute[];
  authenticators: Record<string, Authenticator>;
  bodyLimitBytes: number;
  /** 408 HTTP_BODY_TIMEOUT when a body stalls this long between bytes (BODY_READ_TIMEOUT_MS); unset: uWS's idle close. */
  bodyReadTimeoutMs?: number;
  trustProxy: boolean;
  /**
   * Called once per HTTP request when its answer is written (streams: when they end): the route pattern, never the
   * path. The access log and metrics hang here; absent, nothing is measured.
   */
  onRequest?: (record: RequestRecord) => void;
  /** Check every 2xx body against its response schema (tests); a mismatch is a 500. */
  validateResponses?: boolean;
}

export interface RequestRecord {
  method: string;
  /** The route pattern (`/api/v1/voice/sessions/:sessionId/heartbeat`), or `(unmatched)`. */
  route: string;
  /** The status written; 499 when the client went away first. */
  status: number;
  durationMs: number;
  requestId: string;
}

export interface HttpServer {
  readonly routes: readonly AnyRoute[];
  /** Resolves with the bound port (useful with port 0). */
  listen(host: string, port: number): Promise<number>;
  readonly port: number;
  readonly draining: boolean;
  readonly inFlight: number;
  /** Aborted when draining starts: long streams end themselves. */
  readonly shutdownSignal: AbortSignal;
  /** Graceful stop: readiness 503, listen socket closed, in-flight work finishes until the deadline, then every socket closes. */
  close(graceMs: number): Promise<void>;
}

const BODY_METHODS = new Set<HttpMethod>(['POST', 'PUT', 'PATCH']);
const CORS_ALLOW_HEADERS = 'content-type, authorization, x-parley-signature, x-request-id';

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const { log } = options;
  const app: TemplatedApp = App();
  const shutdown = new AbortController();
  const idPrefix = randomBytes(4).toString('hex');
  let idCounter = 0;
  const newRequestId = () => `${idPrefix}-${(++idCounter).toString(36)}`;
  let inFlight = 0;
  let draining = false;
  let listenSocket: us_listen_socket | false = false;
  let boundPort = -1;
  const idleWaiters: Array<() => void> = [];

  const { entries, compiledOf } = buildRouteTable(options.routes, options.authenticators);

  const finishOne = () => {
    inFlight--;
    if (inFlight === 0) for (const w of idleWaiters.splice(0)) w();
  };

  /** 404 / 405 / preflight: answered synchronously, nothing to await. */
  function answerNow(
    res: HttpResponse,
    copied: CopiedRequest,
    reply: Exclude<Reply, { kind: 'stream' | 'sized' }>,
    cors: boolean,
  ): void {
    const requestId = pickRequestId(copied.headers['x-request-id'], newRequestId);
    writeReply(new ResponseState(res), reply, commonHeaders(requestId, copied, cors), []);
  }

  function handle(res: HttpResponse, req: HttpRequest, entry: PathEntry): void {
    const copied = new RequestView(res, req, entry.paramNames.length, options.trustProxy);
    const method = copied.method as HttpMethod;
    const route = entry.byMethod.get(method);
    if (route === undefined) {
      if (copied.method === 'OPTIONS' && entry.cors) {
        const allow = [...entry.byMethod.keys(), 'OPTIONS'].join(', ');
        answerNow(
          res,
          copied,
          {
            kind: 'empty',
            status: 204,
            headers: {
              'access-control-allow-methods': allow,
              'access-control-allow-headers': CORS_ALLOW_HEADERS,
              'access-control-max-age': '600',
            },
          },
          true,
        );
        return;
      }
      const requestId = pickRequestId(copied.headers['x-request-id'], newRequestId);
      const allow = [...entry.byMethod.keys()].join(', ');
      const err = new AppError(
        HttpErrorCodes.METHOD_NOT_ALLOWED,
        405,
        `${copied.method} is not allowed here; use ${allow}.`,
        { details: { allow: [...entry.byMethod.keys()] } },
      );
      const state = new ResponseState(res);
      writeReply(
        state,
        { kind: 'json', status: 405, body: errorBody(err, requestId), headers: { allow } },
        commonHeaders(requestId, copied, entry.cors),
        [],
      );
      options.onRequest?.({ method: copied.method, route: entry.pattern, status: 405, durationMs: 0, requestId });
      return;
    }

    const state = new ResponseState(res);
    inFlight++;
    const requestId = pickRequestId(copied.header('x-request-id'), newRequestId);
    const ctx = new RequestCtx(requestId, copied, state, shutdown.signal, compiledOf.get(route)!, log);
    const { onRequest } = options;
    let status = 0;
    const started = onRequest === undefined ? 0 : performance.now();
    const done =
      onRequest === undefined
        ? finishOne
        : () => {
            finishOne();
            onRequest({
              method,
              route: route.path,
              status: state.aborted && !state.finished ? 499 : status,
              durationMs: performance.now() - started,
              requestId,
            });
          };

    const limit = route.bodyLimit ?? options.bodyLimitBytes;
    let bodyPromise: Promise<Buffer> | undefined;
    let early: AppError | undefined;
    if (BODY_METHODS.has(method)) {
      const declared = Number(copied.header('content-length') ?? '0');
      if (Number.isFinite(declared) && declared > limit) early = bodyTooLarge(limit);
      else {
        bodyPromise = readBody(res, limit, (cb) => state.onAbort(cb), options.bodyReadTimeoutMs);
        bodyPromise.catch(() => undefined); // handled where awaited
      }
    }
    const common = commonHeaders(requestId, copied, entry.cors);
    // Synchronous as far as the route allows: a route without auth, body or an async handler (GET /healthz) is
    // answered inside this uWS callback, with no promise, microtask or extra object on the way.
    let outcome: Reply | Promise<Reply>;
    try {
      outcome = begin(route, entry, copied, ctx, bodyPromise, early);
    } catch (err) {
      status = statusOfError(err);
      fail(err, state, ctx, common);
      copied.release();
      done();
      return;
    }
    // docs/house-rules.md rules 14 and 15: before this callback returns without an answer, the headers are copied and
    // onAborted is armed (so before any await can yield); a reply written right here needs neither (GET /healthz).
    if (outcome instanceof Promise || outcome.kind === 'stream' || outcome.kind === 'sized') {
      copied.detach();
      res.onAborted(() => state.markAborted());
    }
    if (outcome instanceof Promise) {
      outcome
        .then(
          (reply) => ((status = reply.status), deliver(reply, state, ctx, common)),
          (err: unknown) => ((status = statusOfError(err)), fail(err, state, ctx, common)),
        )
        .catch((err: unknown) => ctx.log.error({ err }, 'could not write the answer'))
        .finally(done);
      return;
    }
    status = outcome.status;
    let writing: Promise<void> | undefined;
    try {
      writing = deliver(outcome, state, ctx, common);
    } catch (err) {
      ctx.log.error({ err }, 'could not write the answer');
    }
    if (writing === undefined) {
      copied.release();
      done();
    } else writing.catch((err: unknown) => ctx.log.error({ err }, 'could not write the answer')).finally(done);
  }

  /** Validation of the path and query, then (when needed) auth, body and handler; sync when nothing awaits. */
  function begin(
    route: AnyRoute,
    entry: PathEntry,
    copied: CopiedRequest,
    ctx: RequestCtx,
    bodyPromise: Promise<Buffer> | undefined,
    early: AppError | undefined,
  ): Reply | Promise<Reply> {
    if (early) throw early;
    ctx.params =
      entry.paramNames.length === 0 && !route.schemas.params
        ? {}
        : parsePart(route.schemas.params, decodeParams(entry.paramNames, copied.params), 'params');
    ctx.query =
      copied.rawQuery.length === 0 && !route.schemas.query
        ? {}
        : parsePart(route.schemas.query, parseQuery(copied.rawQuery), 'query');
    if ((route.auth !== 'none' && !route.deferAuth) || bodyPromise !== undefined)
      return finishAsync(route, copied, ctx, bodyPromise);
    const out = route.handler(ctx);
    if (out instanceof Promise)
      return options.validateResponses ? out.then((reply) => (checkResponse(route, reply), reply)) : out;
    if (options.validateResponses) checkResponse(route, out);
    return out;
  }

  async function finishAsync(
    route: AnyRoute,
    copied: CopiedRequest,
    ctx: RequestCtx,
    bodyPromise: Promise<Buffer> | undefined,
  ): Promise<Reply> {
    if (!route.deferAuth) await ctx.authenticate();
    if (bodyPromise) {
      const raw = await bodyPromise;
      if (route.rawBody) ctx.rawBody = raw;
      ctx.body = parseBody(route, raw, copied.headers['content-type']);
    }
    const reply = await route.handler(ctx);
    if (options.validateResponses) checkResponse(route, reply);
    return reply;
  }

  /** Writes a reply (corked: docs/house-rules.md rule 16); resolves when a streamed one ends. Nothing when the client went away. */
  function deliver(
    reply: Reply,
    state: ResponseState,
    ctx: RequestCtx,
    common: Record<string, string>,
  ): Promise<void> | undefined {
    if (!state.open) return undefined; // the client went away while we worked: nothing to write
    const added = ctx.addedHeaders();
    const cookies = ctx.addedCookies();
    if (reply.kind === 'stream') return writeStream(state, withHeaders(reply, added), common, cookies, ctx.log);
    if (reply.kind === 'sized') return writeSized(state, withHeaders(reply, added), common, cookies, ctx.log);
    writeReply(state, withHeaders(reply, added), common, cookies);
    return undefined;
  }

  function fail(err: unknown, state: ResponseState, ctx: RequestCtx, common: Record<string, string>): void {
    if (err instanceof BodyAborted || !state.open) return;
    // The rest of an unread body would be taken for the next request: close after answering.
    const closeConnection =
      isAppError(err) && (err.code === HttpErrorCodes.BODY_TOO_LARGE || err.code === HttpErrorCodes.BODY_TIMEOUT);
    writeReply(
      state,
      withHeaders(
        errorReply(err, ctx.requestId, () => ctx.log),
        ctx.addedHeaders(),
      ),
      common,
      ctx.addedCookies(),
      closeConnection,
    );
  }

  for (const entry of entries.values()) {
    app.any(entry.pattern, (res, req) => handle(res, req, entry));
  }
  for (const socketRoute of options.sockets ?? []) {
    attachSocketRoute(app, socketRoute, {
      log,
      trustProxy: options.trustProxy,
      newRequestId,
      shutdownSignal: shutdown.signal,
    });
  }
  app.any('/*', (res, req) => {
    const copied = copyRequest(res, req, 0, options.trustProxy);
    const requestId = pickRequestId(copied.headers['x-request-id'], newRequestId);
    const err = new AppError(HttpErrorCodes.NOT_FOUND, 404, `No route for ${copied.method} ${copied.path}.`);
    writeReply(
      new ResponseState(res),
      { kind: 'json', status: 404, body: errorBody(err, requestId) },
      commonHeaders(requestId, copied, false),
      [],
    );
    options.onRequest?.({ method: copied.method, route: '(unmatched)', status: 404, durationMs: 0, requestId });
  });

  return {
    routes: options.routes,
    get port() {
      return boundPort;
    },
    get draining() {
      return draining;
    },
    get inFlight() {
      return inFlight;
    },
    shutdownSignal: shutdown.signal,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) {
            reject(new Error(`could not listen on ${host}:${port}`));
            return;
          }
          listenSocket = socket;
          boundPort = us_socket_local_port(socket as never);
          resolve(boundPort);
        });
      });
    },
    async close(graceMs) {
      if (draining) return;
      draining = true;
      shutdown.abort();
      if (listenSocket) us_listen_socket_close(listenSocket);
      listenSocket = false;
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs);
          idleWaiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      if (inFlight > 0) log.warn({ inFlight }, 'shutdown deadline passed with requests still running');
      app.close();
    },
  };
}
