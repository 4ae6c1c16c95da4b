/**
 * A thin typed client over fetch: paths, parameters, bodies and answers are the generated contract types, so a wrong
 * request shape is a compile-time error. Runs wherever fetch does (Node 20, browsers, workers).
 */
import { errorFromAnswer, networkError, ParleyError } from './errors.js';
import { abortableSleep } from './sleep.js';
import type {
  CallOptions,
  HttpMethod,
  Operation,
  OptionalArgs,
  PathsWith,
  RequestOptions,
  SuccessBody,
} from './types.js';
import type { paths } from './generated/openapi.js';

/** What a `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) answer said about the operation just called. */
export interface DeprecationNotice {
  method: string;
  /** The documented path (with `{placeholders}`), e.g. `/api/v1/chat`. */
  path: string;
  /** The Deprecation header as sent (`@<unix seconds>` or `true`). */
  deprecation: string;
  /** When it was (or will be) deprecated, if the header carried a date. */
  deprecatedAt: Date | undefined;
  /** The Sunset header as a date: after it the route may be gone. */
  sunset: Date | undefined;
  /** A Link rel="deprecation" or rel="sunset" target, if given. */
  link: string | undefined;
}

export interface RetryOptions {
  /** How many times a 429, or a 503 that carries Retry-After, is retried. Default 3. */
  maxRetries?: number;
  /** Longest single wait; a Retry-After above it is not waited for (the ParleyError is thrown). Default 30 s. */
  maxDelayMs?: number;
  /** Longest time spent waiting across all retries of one call; past it the last ParleyError is thrown. Default 60 s. */
  maxTotalDelayMs?: number;
}

export interface ParleyClientOptions {
  /** e.g. `https://parley.example.com`; '' for same-origin browser calls. */
  baseUrl: string;
  /** An API key (sk_live_...). Omit for keyless widget/playground calls. */
  apiKey?: string;
  /** Headers sent with every call (e.g. `origin` for keyless calls from Node). */
  headers?: Record<string, string>;
  /**
   * Retry 429 answers, and 503 answers with Retry-After (the server is busy or a dependency is briefly away; it refused
   * before doing any work), waiting what Retry-After says. Off by default: true for the defaults, or tune it.
   */
  retry?: boolean | RetryOptions;
  /** Called for every answer of a deprecated operation. Default: one console.warn per operation. */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /** A fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
}

type Call<M extends HttpMethod> = <P extends PathsWith<M>>(
  path: P,
  ...args: OptionalArgs<Operation<P, M>>
) => Promise<SuccessBody<Operation<P, M>>>;

export interface ParleyClient {
  GET: Call<'get'>;
  POST: Call<'post'>;
  PUT: Call<'put'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
  /**
   * The raw Response of a successful call (streams: chat with `accept: text/event-stream`, the voice gate's
   * NDJSON). Non-2xx answers still throw ParleyError; the body is yours to read.
   */
  stream<M extends HttpMethod, P extends PathsWith<M>>(
    method: M,
    path: P,
    ...args: OptionalArgs<Operation<P, M>>
  ): Promise<Response>;
  readonly baseUrl: string;
}

interface LooseOptions extends CallOptions {
  params?: { path?: Record<string, string | number>; query?: Record<string, unknown> };
  body?: unknown;
  /** A body sent as is (FormData, Blob, bytes) instead of JSON; fetch sets its content type. */
  rawBody?: RequestInit['body'];
}

/** Expands `{name}` placeholders and appends the query string. */
export function buildUrl(baseUrl: string, path: string, params: LooseOptions['params']): string {
  const expanded = path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = params?.path?.[name];
    if (value === undefined) throw new TypeError(`missing path parameter ${name} for ${path}`);
    return encodeURIComponent(String(value));
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params?.query ?? {})) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  const query = search.toString();
  return `${baseUrl.replace(/\/+$/, '')}${expanded}${query === '' ? '' : `?${query}`}`;
}

/** Reads Deprecation / Sunset / Link from an answer; undefined when the operation is not deprecated. */
export function deprecationOf(method: string, path: string, headers: Headers): DeprecationNotice | undefined {
  const deprecation = headers.get('deprecation');
  if (deprecation === null) return undefined;
  const at = /^@(-?\d+)$/.exec(deprecation.trim());
  const sunsetHeader = headers.get('sunset');
  const sunset = sunsetHeader === null ? undefined : new Date(sunsetHeader);
  const link = /<([^>]+)>\s*;\s*rel="?(?:deprecation|sunset)"?/i.exec(headers.get('link') ?? '')?.[1];
  return {
    method,
    path,
    deprecation,
    deprecatedAt: at ? new Date(Number(at[1]) * 1000) : undefined,
    sunset: sunset === undefined || Number.isNaN(sunset.getTime()) ? undefined : sunset,
    link,
  };
}

function warnOncePerOperation(): (notice: DeprecationNotice) => void {
  const warned = new Set<string>();
  return (notice) => {
    const key = `${notice.method} ${notice.path}`;
    if (warned.has(key)) return;
    warned.add(key);
    const sunset = notice.sunset ? `; it may be removed after ${notice.sunset.toISOString()}` : '';
    console.warn(`[parley] ${key} is deprecated${sunset}${notice.link ? ` (see ${notice.link})` : ''}`);
  };
}

/** Creates a client. Every non-2xx answer throws a {@link ParleyError}. */
export function createParleyClient(options: ParleyClientOptions): ParleyClient {
  const doFetch =
    options.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => globalThis.fetch(input, init));
  const retry: Required<RetryOptions> | undefined =
    options.retry === undefined || options.retry === false
      ? undefined
      : {
          maxRetries: 3,
          maxDelayMs: 30_000,
          maxTotalDelayMs: 60_000,
          ...(options.retry === true ? {} : options.retry),
        };
  const onDeprecation = options.onDeprecation ?? warnOncePerOperation();

  async function send(method: HttpMethod, path: string, call: LooseOptions = {}): Promise<Response> {
    const url = buildUrl(options.baseUrl, path, call.params);
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers, ...call.headers };
    if (options.apiKey !== undefined) headers['authorization'] = `Bearer ${options.apiKey}`;
    const hasBody = call.body !== undefined || method === 'post' || method === 'put' || method === 'patch';
    if (hasBody && call.rawBody === undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = {
      method: method.toUpperCase(),
      headers,
      ...(call.rawBody !== undefined
        ? { body: call.rawBody }
        : hasBody
          ? { body: JSON.stringify(call.body ?? {}) }
          : {}),
      ...(call.signal ? { signal: call.signal } : {}),
    };
    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await doFetch(url, init);
      } catch (err) {
        throw networkError(err);
      }
      const notice = deprecationOf(init.method!, path, res.headers);
      if (notice) onDeprecation(notice);
      if (res.ok) return res;
      const error = errorFromAnswer(res.status, res.headers, await res.text().catch(() => ''));
      const retryable = res.status === 429 || (res.status === 503 && error.retryAfterMs !== undefined);
      if (retry === undefined || !retryable || attempt >= retry.maxRetries) throw error;
      // Retry-After is when the server expects room; a little jitter keeps a refused burst from coming back as one.
      const wait =
        error.retryAfterMs !== undefined
          ? error.retryAfterMs + Math.random() * 250
          : Math.min(retry.maxDelayMs, 500 * 2 ** attempt * (1 + Math.random()));
      if (wait > retry.maxDelayMs || waited + wait > retry.maxTotalDelayMs) throw error;
      waited += wait;
      try {
        await abortableSleep(wait, call.signal);
      } catch (err) {
        throw networkError(err);
      }
    }
  }

  async function json(method: HttpMethod, path: string, call?: LooseOptions): Promise<unknown> {
    const res = await send(method, path, call);
    const text = await res.text();
    if (text === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new ParleyError({
        status: res.status,
        code: 'INVALID_RESPONSE',
        message: `${method.toUpperCase()} ${path} answered ${res.status} with a body that is not JSON`,
        requestId: res.headers.get('x-request-id') ?? undefined,
        cause: err,
      });
    }
  }

  const verb = (method: HttpMethod) => ((path: string, call?: LooseOptions) => json(method, path, call)) as never;
  return {
    baseUrl: options.baseUrl,
    GET: verb('get'),
    POST: verb('post'),
    PUT: verb('put'),
    PATCH: verb('patch'),
    DELETE: verb('delete'),
    stream: ((method: HttpMethod, path: string, call?: LooseOptions) => send(method, path, call)) as never,
  };
}

export type { RequestOptions };
export type { paths };
