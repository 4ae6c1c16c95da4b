import type { z } from 'zod';
import type { Logger } from '../log/index.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Request schemas and one response schema per status. The same schemas validate, type and document. */
export interface RouteSchemas {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  response: Partial<Record<number, z.ZodType>>;
}

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

/** What a handler sees: a copy of the request, made before the uWS handler returned. */
export interface RequestContext<P = unknown, Q = unknown, B = unknown> {
  readonly requestId: string;
  readonly method: HttpMethod;
  /** Path without the query string. */
  readonly path: string;
  /** Raw query string without "?". */
  readonly rawQuery: string;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** The body as received, for routes that declare rawBody (signatures, uploads). */
  readonly rawBody: Buffer | undefined;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly ip: string;
  /** Aborted when the client goes away; pass it down to every await that can be cancelled. */
  readonly signal: AbortSignal;
  /** Aborted when the server begins draining (long streams should finish). */
  readonly shutdownSignal: AbortSignal;
  readonly log: Logger;
  /** Whatever the route's authenticator resolved (a principal), or undefined for auth "none". */
  principal: unknown;
  /**
   * Runs the route's authenticator now and sets `principal` (routes with `deferAuth`, after the checks that must
   * answer first). Resolves the principal; for other routes it has already run and resolves the same value.
   */
  authenticate(): Promise<unknown>;
  /** Headers added to whatever answer this request gets, including errors (rate-limit headers, cookies). */
  readonly responseHeaders: Record<string, string>;
  /** Set-Cookie values added to the answer. */
  readonly setCookies: string[];
  readonly route: RouteMeta;
}

export interface RouteMeta {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: string;
  readonly scope: string | undefined;
  /** The route's {@link RouteDefinition.rateLimitExempt}: authenticators skip request rate limits for it. */
  readonly rateLimitExempt: boolean;
}

export interface OpenApiMeta {
  summary: string;
  description?: string;
  tags?: string[];
  operationId?: string;
  /** Not part of the public v1 document (dashboard-only, admin, webhooks, health). */
  hidden?: boolean;
  /** Error answers worth naming: status -> description (all use the Error body). */
  errors?: Partial<Record<number, string>>;
  /** Content type of a success answer when it is not JSON (NDJSON, SSE, audio). */
  contentTypes?: Partial<Record<number, string>>;
  responseDescriptions?: Partial<Record<number, string>>;
  /** More content types of a success answer, same status: content type -> schema (of one event, for streams). */
  alternateContent?: Partial<Record<number, Record<string, z.ZodType>>>;
  /** The request body by content type, where it is not the JSON body schema (multipart uploads). */
  requestContent?: Record<string, z.ZodType>;
  /** Touches neither the database nor the shared store, so it never answers 503 DEPENDENCY_UNAVAILABLE. */
  dependencyFree?: boolean;
  /**
   * Deprecated (docs/api.md, Versioning and deprecation): marked in OpenAPI, and every answer carries `Deprecation:
   * @<since>` (RFC 9745), plus `Sunset` (RFC 8594) when a date is set and `Link rel="deprecation"` when a link is. (A
   * field is deprecated with zod: `.meta({ deprecated: true })`.)
   */
  deprecated?: RouteDeprecation;
}

export interface RouteDeprecation {
  /** When it was deprecated (ISO 8601 date). */
  since: string;
  /** When it may be removed (ISO 8601 date; at least 90 days after since). */
  sunset?: string;
  /** Where the migration is explained. */
  link?: string;
}

export interface RouteDefinition<S extends RouteSchemas = RouteSchemas> {
  method: HttpMethod;
  /** uWS pattern, parameters as `:name`. */
  path: string;
  /** Name of an authenticator registered with the shell; "none" needs nothing. */
  auth: string;
  /** Passed to the authenticator (for bearer routes: the required scope). */
  scope?: string;
  /** Keyless browser routes: answer CORS preflight and reflect the Origin. */
  cors?: boolean;
  /**
   * Parse and validate the body before authenticating, and let the handler call `ctx.authenticate()` itself when
   * a check must answer before identity (voice mint: capabilities are validated before anything else). OpenAPI
   * still documents the route's `auth`.
   */
  deferAuth?: boolean;
  /**
   * Never refused (nor counted) by a request rate limit such as the per-API-key one: for requests that end or keep
   * supervised something already admitted and billed (voice end, heartbeat). Refusing them would keep a call running
   * and billing: a busy key can always hang up. They still authenticate and still check scopes.
   */
  rateLimitExempt?: boolean;
  /** Per-route body limit in bytes (defaults to the server's). */
  bodyLimit?: number;
  /** Keep the raw bytes (ctx.rawBody) and skip JSON parsing of non-JSON bodies. */
  rawBody?: boolean;
  schemas: S;
  openapi: OpenApiMeta;
  handler: (ctx: RequestContext<Out<S['params']>, Out<S['query']>, Out<S['body']>>) => Promise<Reply> | Reply;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDefinition<any>;

/** Typed constructor: infers the handler's context types from the schemas. */
export function defineRoute<S extends RouteSchemas>(route: RouteDefinition<S>): RouteDefinition<S> {
  return route;
}

/** Resolves a principal or throws an AppError (401/403/429). May add ctx.responseHeaders. */
export type Authenticator = (ctx: RequestContext, route: RouteMeta) => Promise<unknown> | unknown;

/** A sink for streamed answers (SSE, NDJSON). write() resolves once the chunk is accepted by the socket
 * buffer; under backpressure it waits for the client to drain, so a slow reader blocks the producer
 * instead of growing memory. It resolves false once the client is gone. */
export interface StreamSink {
  write(chunk: string | Uint8Array): Promise<boolean>;
  readonly signal: AbortSignal;
  readonly closed: boolean;
}

export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'bytes'; status: number; body: string | Uint8Array; contentType: string; headers?: Record<string, string> }
  | { kind: 'empty'; status: number; headers?: Record<string, string> }
  | {
      kind: 'stream';
      status: number;
      contentType: string;
      headers?: Record<string, string>;
      /** Produces the stream; the response ends when it resolves (or rejects, after a last write). */
      run: (sink: StreamSink) => Promise<void>;
    }
  | {
      /**
       * A body of known length streamed with Content-Length (files, Range answers): written with uWS tryEnd and
       * onWritable, so a slow reader holds the producer back. The producer must write exactly `length` bytes;
       * if it stops short the connection is closed (the client sees a truncated body, never a wrong one).
       */
      kind: 'sized';
      status: number;
      contentType: string;
      length: number;
      headers?: Record<string, string>;
      run: (sink: StreamSink) => Promise<void>;
    };
