import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { AppError, HttpErrorCodes } from '../errors/index.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Everything we need from a uWS HttpRequest, copied before the handler returns (docs/house-rules.md rule 14). */
export interface CopiedRequest {
  method: string;
  path: string;
  rawQuery: string;
  headers: Record<string, string>;
  params: string[];
  ip: string;
}

export function copyRequest(
  res: HttpResponse,
  req: HttpRequest,
  paramCount: number,
  trustProxy: boolean,
): CopiedRequest {
  const headers = copyHeaders(req);
  const params: string[] = [];
  for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? '');
  const ip = clientAddress(res, trustProxy ? headers : undefined);
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    path: req.getUrl(),
    rawQuery: req.getQuery() ?? '',
    headers,
    params,
    ip,
  };
}

/**
 * The request as the router sees it inside the uWS handler: method, path, query and path parameters copied at once;
 * headers and the client address read from uWS only when something asks (GET /healthz never does).
 * docs/house-rules.md rule 14 still holds: {@link RequestView.detach} copies them before the handler returns without
 * having answered, and after an answer written inside the handler nothing may read them any more.
 */
export class RequestView implements CopiedRequest {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly params: string[];
  #req: HttpRequest | undefined;
  #res: HttpResponse | undefined;
  #headers: Record<string, string> | undefined;
  #ip: string | undefined;
  readonly #trustProxy: boolean;

  constructor(res: HttpResponse, req: HttpRequest, paramCount: number, trustProxy: boolean) {
    this.#req = req;
    this.#res = res;
    this.#trustProxy = trustProxy;
    this.method = req.getCaseSensitiveMethod().toUpperCase();
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    const params: string[] = [];
    for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? '');
    this.params = params;
  }

  get headers(): Record<string, string> {
    if (this.#headers === undefined) this.#headers = copyHeaders(this.#attached());
    return this.#headers;
  }

  /** One header without copying the rest ('' counts as absent, as uWS reports a missing header). */
  header(name: string): string | undefined {
    if (this.#headers !== undefined) return this.#headers[name];
    const value = this.#attached().getHeader(name);
    return value === '' ? undefined : value;
  }

  get ip(): string {
    if (this.#ip === undefined) {
      this.#attached();
      this.#ip = clientAddress(this.#res!, this.#trustProxy ? this.headers : undefined);
    }
    return this.#ip;
  }

  /** Copies headers and address now: the handler is about to return before answering (docs/house-rules.md rule 14). */
  detach(): void {
    void this.headers;
    void this.ip;
    this.#req = undefined;
    this.#res = undefined;
  }

  /** The handler answered and returns: from here on only what was already copied may be read. */
  release(): void {
    this.#req = undefined;
    this.#res = undefined;
  }

  #attached(): HttpRequest {
    if (this.#req === undefined)
      throw new Error('request headers read after the uWS handler returned (docs/house-rules.md rule 14)');
    return this.#req;
  }
}

function copyHeaders(req: HttpRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  req.forEach((key, value) => {
    // Repeated headers are folded as RFC 9110 allows (cookie uses "; ").
    const existing = headers[key];
    headers[key] = existing === undefined ? value : `${existing}${key === 'cookie' ? '; ' : ', '}${value}`;
  });
  return headers;
}

function clientAddress(res: HttpResponse, headers: Record<string, string> | undefined): string {
  const forwarded = headers?.['x-forwarded-for']?.split(',')[0]?.trim();
  return forwarded ? forwarded : Buffer.from(res.getRemoteAddressAsText()).toString();
}

export function pickRequestId(incoming: string | undefined, generate: () => string): string {
  return incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : generate();
}

/** Query string -> object; a repeated key becomes an array. */
export function parseQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (raw.length === 0) return out;
  for (const [key, value] of new URLSearchParams(raw)) {
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[key] = [existing, value];
  }
  return out;
}

export function decodeParams(names: string[], values: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  names.forEach((name, i) => {
    try {
      out[name] = decodeURIComponent(values[i] ?? '');
    } catch {
      throw new AppError(HttpErrorCodes.VALIDATION_FAILED, 400, 'A path parameter is not valid percent-encoding.', {
        details: { issues: [{ path: `params.${name}`, message: 'invalid percent-encoding' }] },
      });
    }
  });
  return out;
}

export class BodyAborted extends Error {}

/**
 * Reads the body with a byte limit. onData must be attached synchronously in the uWS handler, so this is
 * called before any await; chunks are copied because uWS neuters them on return (docs/house-rules.md rule 14).
 * `idleMs`: when no byte arrives for that long before the body is complete (a body shorter than its Content-Length),
 * the read fails with 408 HTTP_BODY_TIMEOUT, answered before uWS's own idle timeout would close the socket silently.
 */
export function readBody(
  res: HttpResponse,
  limit: number,
  onAbort: (cb: () => void) => void,
  idleMs?: number,
): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      if (idleMs === undefined) return;
      if (idle !== undefined) idle.refresh();
      else idle = setTimeout(() => settle(() => reject(bodyTimeout(idleMs))), idleMs);
    };
    const settle = (then: () => void) => {
      if (settled) return;
      settled = true;
      // Forget the timer: a long-lived response (a gate stream) keeps this closure for its whole life.
      if (idle !== undefined) clearTimeout(idle);
      idle = undefined;
      then();
    };
    onAbort(() => settle(() => reject(new BodyAborted('client went away while sending the body'))));
    armIdle();
    res.onData((chunk, isLast) => {
      if (settled) return;
      size += chunk.byteLength;
      if (size > limit) {
        settle(() => reject(bodyTooLarge(limit)));
        return;
      }
      if (chunk.byteLength > 0) chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) settle(() => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
      else armIdle();
    });
  });
}

export function bodyTimeout(idleMs: number): AppError {
  return new AppError(
    HttpErrorCodes.BODY_TIMEOUT,
    408,
    `The request body stopped arriving: no byte for ${idleMs} ms before its Content-Length was reached.`,
    {
      details: { idleMs },
    },
  );
}

export function bodyTooLarge(limit: number): AppError {
  return new AppError(HttpErrorCodes.BODY_TOO_LARGE, 413, `The request body is larger than ${limit} bytes.`, {
    details: { limitBytes: limit },
  });
}
