/**
 * Type-level views of the generated `paths` (src/generated/openapi.ts): which paths take which method, and what an
 * operation's path parameters, query, body and success body are. Wrong request shapes fail at compile time.
 */
import type { paths } from './generated/openapi.js';

export type { paths, operations, components } from './generated/openapi.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

type Defined<T> = Exclude<T, undefined>;

/** The paths that have an operation for method M. */
export type PathsWith<M extends HttpMethod> = {
  [P in keyof paths]: [Defined<paths[P][M]>] extends [never] ? never : P;
}[keyof paths];

/** The operation object of method M on path P. */
export type Operation<P extends keyof paths, M extends HttpMethod> = Defined<paths[P][M]>;

type ParamsOf<O> = O extends { parameters: infer X } ? X : never;
type PathParamsOf<O> = ParamsOf<O> extends { path: infer X } ? X : never;
type QueryOf<O> = ParamsOf<O> extends { query?: infer X } ? X : never;

/** The JSON request body of an operation; never when it takes none. */
export type RequestBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : O extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B | undefined
    : never;

type SuccessStatus = 200 | 201 | 202 | 204;
type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
type ContentOf<R> = R extends { content: infer C } ? C : never;

/** The body of an operation's success answer: its JSON, or for stream-only answers the NDJSON/SSE line schema. */
export type SuccessBody<O> = {
  [S in SuccessStatus]: S extends keyof ResponsesOf<O>
    ? ContentOf<ResponsesOf<O>[S]> extends infer C
      ? C extends { 'application/json': infer J }
        ? J
        : C extends Record<string, infer B>
          ? B
          : undefined
      : never
    : never;
}[SuccessStatus];

type NoInput = Record<never, never>;
type PathPart<O> = [PathParamsOf<O>] extends [never]
  ? NoInput
  : PathParamsOf<O> extends undefined
    ? NoInput
    : { path: PathParamsOf<O> };
type QueryPart<O> = [QueryOf<O>] extends [never]
  ? NoInput
  : QueryOf<O> extends undefined
    ? NoInput
    : object extends Defined<QueryOf<O>>
      ? { query?: Defined<QueryOf<O>> }
      : { query: Defined<QueryOf<O>> };
type ParamsPart<O> = keyof (PathPart<O> & QueryPart<O>) extends never
  ? { params?: never }
  : object extends PathPart<O> & QueryPart<O>
    ? { params?: PathPart<O> & QueryPart<O> }
    : { params: PathPart<O> & QueryPart<O> };
type BodyPart<O> = [RequestBody<O>] extends [never]
  ? { body?: never }
  : undefined extends RequestBody<O>
    ? { body?: Defined<RequestBody<O>> }
    : { body: RequestBody<O> };

/** Per-call options every operation accepts. */
export interface CallOptions {
  /** Extra headers (e.g. `origin` and `x-parley-signature` for keyless calls from Node). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Everything a call of operation O takes: `params.path`, `params.query` and `body` as the contract types them. */
export type RequestOptions<O> = ParamsPart<O> & BodyPart<O> & CallOptions;

/** True when every field of the options is optional (then the options argument may be left out). */
export type OptionalArgs<O> =
  object extends RequestOptions<O> ? [options?: RequestOptions<O>] : [options: RequestOptions<O>];
