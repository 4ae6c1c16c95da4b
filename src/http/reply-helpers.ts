import { asDependencyFailure, isAppError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { errorBody, internalError } from './errors.js';
import { BodyAborted, RequestView, type CopiedRequest } from './request.js';
import type { Reply } from './types.js';

const CORS_EXPOSE_HEADERS = 'x-request-id, retry-after, ratelimit, ratelimit-policy, deprecation, sunset, link';

/** Headers every answer carries: its request id, and the CORS exposure when the route allows cross-origin calls. */
export function commonHeaders(requestId: string, copied: CopiedRequest, cors: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (!cors) return headers;
  const origin = headerOf(copied, 'origin');
  if (origin !== undefined) {
    headers['access-control-allow-origin'] = origin;
    headers['access-control-expose-headers'] = CORS_EXPOSE_HEADERS;
    headers['vary'] = 'Origin';
  }
  return headers;
}

/** The error body and status for anything a handler threw: AppErrors as they are, dependency failures as 503. */
export function errorReply(
  err: unknown,
  requestId: string,
  reqLog: () => Logger,
): Exclude<Reply, { kind: 'stream' | 'sized' }> {
  // A dependency that refused or missed its deadline is a 503 with a code, never a 500 (docs/house-rules.md rule 18).
  const mapped = isAppError(err) ? err : asDependencyFailure(err);
  if (mapped !== undefined) {
    if (!isAppError(err))
      reqLog().warn(
        { err: { message: (err as Error).message, code: (err as { code?: unknown }).code } },
        'dependency unavailable',
      );
    return {
      kind: 'json',
      status: mapped.status,
      body: errorBody(mapped, requestId),
      ...(mapped.headers ? { headers: mapped.headers } : {}),
    };
  }
  reqLog().error({ err }, 'unhandled error in request');
  return { kind: 'json', status: 500, body: errorBody(internalError(), requestId) };
}

/** The status an error is answered with (what fail() writes); 499 when the client went away mid-body. */
export function statusOfError(err: unknown): number {
  if (err instanceof BodyAborted) return 499;
  if (isAppError(err)) return err.status;
  return asDependencyFailure(err)?.status ?? 500;
}

/** One header: without copying them all when the request is still a live uWS view. */
export function headerOf(copied: CopiedRequest, name: string): string | undefined {
  return copied instanceof RequestView ? copied.header(name) : copied.headers[name];
}

export function withHeaders<R extends Reply>(reply: R, extra: Record<string, string> | undefined): R {
  if (extra === undefined) return reply;
  for (const _ in extra) return { ...reply, headers: { ...extra, ...reply.headers } };
  return reply;
}
