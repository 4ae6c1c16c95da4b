import type { Logger } from '../log/index.js';
import type { CopiedRequest } from './request.js';
import type { Authenticator, HttpMethod, RequestContext, RouteMeta } from './types.js';
import type { ResponseState } from './writer.js';

/** What the shell works out once per route at startup instead of on every request (it was a measurable share of the cheapest routes). */
export interface CompiledRoute {
  readonly meta: RouteMeta;
  /** The route's authenticator; undefined for auth "none". */
  readonly authenticator: Authenticator | undefined;
  /** Deprecation / Sunset / Link of a deprecated route, computed once (undefined for every other route). */
  readonly deprecationHeaders?: Readonly<Record<string, string>> | undefined;
}

const NO_COOKIES: readonly string[] = Object.freeze([]);

/**
 * The RequestContext a handler sees. A class, so the per-request cost is one object with its methods on the
 * prototype: the logger child, the abort signal, the response-header map and the cookie list are made only
 * when something asks for them (on GET /healthz nothing does).
 */
export class RequestCtx implements RequestContext {
  params: unknown = undefined;
  query: unknown = undefined;
  body: unknown = undefined;
  rawBody: Buffer | undefined = undefined;
  principal: unknown = undefined;
  readonly method: HttpMethod;
  readonly path: string;
  readonly rawQuery: string;
  #log: Logger | undefined;
  #responseHeaders: Record<string, string> | undefined;
  #setCookies: string[] | undefined;

  constructor(
    readonly requestId: string,
    private readonly copied: CopiedRequest,
    private readonly state: ResponseState,
    readonly shutdownSignal: AbortSignal,
    private readonly compiled: CompiledRoute,
    private readonly rootLog: Logger,
  ) {
    this.method = compiled.meta.method;
    this.path = copied.path;
    this.rawQuery = copied.rawQuery;
    // Deprecated routes only (docs/api.md, Versioning and deprecation): on every answer, errors included.
    if (compiled.deprecationHeaders !== undefined) this.#responseHeaders = { ...compiled.deprecationHeaders };
  }

  /** Lower-cased header names; read from uWS on first use (the shell copies them before any await). */
  get headers(): Readonly<Record<string, string>> {
    return this.copied.headers;
  }

  get ip(): string {
    return this.copied.ip;
  }

  get signal(): AbortSignal {
    return this.state.signal;
  }

  get log(): Logger {
    return (this.#log ??= this.rootLog.child({
      requestId: this.requestId,
      method: this.method,
      route: this.compiled.meta.path,
    }));
  }

  get route(): RouteMeta {
    return this.compiled.meta;
  }

  get responseHeaders(): Record<string, string> {
    return (this.#responseHeaders ??= {});
  }

  get setCookies(): string[] {
    return (this.#setCookies ??= []);
  }

  /** Headers added by authenticators and handlers, or undefined when none were (no allocation on the fast path). */
  addedHeaders(): Record<string, string> | undefined {
    return this.#responseHeaders;
  }

  addedCookies(): readonly string[] {
    return this.#setCookies ?? NO_COOKIES;
  }

  async authenticate(): Promise<unknown> {
    const { authenticator } = this.compiled;
    if (authenticator !== undefined && this.principal === undefined)
      this.principal = await authenticator(this, this.compiled.meta);
    return this.principal;
  }
}
