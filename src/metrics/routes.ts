import { timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { z } from 'zod';
import { AppError } from '../errors/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import type { Logger } from '../log/index.js';
import type { Metrics } from './metrics.js';

export const MetricsErrorCodes = {
  UNAUTHORIZED: 'METRICS_UNAUTHORIZED',
} as const;

const BEARER = /^Bearer +(\S+)$/i;
const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time: the token's length is not revealed by the comparison either (both sides hashed first). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = header === undefined ? undefined : BEARER.exec(header.trim())?.[1];
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

/**
 * GET /metrics on the service's own port, only when METRICS_TOKEN is set: `Authorization: Bearer <METRICS_TOKEN>`,
 * else 401. Hidden from the API document (it is for the operator's Prometheus, not for API clients).
 */
export function metricsRoutes(metrics: Metrics, token: string): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/metrics',
      auth: 'none',
      rateLimitExempt: true,
      schemas: { response: { 200: z.string() } },
      openapi: { summary: 'Prometheus metrics', hidden: true, errors: { 401: 'No or wrong METRICS_TOKEN' } },
      handler: async (ctx) => {
        if (!bearerMatches(ctx.headers['authorization'], token)) {
          throw new AppError(MetricsErrorCodes.UNAUTHORIZED, 401, 'Send Authorization: Bearer <METRICS_TOKEN>.', {
            headers: { 'www-authenticate': 'Bearer realm="metrics"' },
          });
        }
        return reply.bytes(await metrics.text(), metrics.contentType);
      },
    }),
  ];
}

/**
 * METRICS_PORT: /metrics on a port of its own (plain node:http, loopback or a private network; the bearer token
 * applies here too when set). Anything else on that port is 404.
 */
export function metricsListener(
  metrics: Metrics,
  options: { host: string; port: number; token?: string | undefined; log: Logger },
) {
  let server: Server | undefined;
  return {
    start: () =>
      new Promise<void>((resolve, reject) => {
        const s = createServer((req, res) => {
          if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
            res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
            return;
          }
          if (options.token !== undefined && !bearerMatches(req.headers.authorization, options.token)) {
            res
              .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="metrics"' })
              .end('unauthorized\n');
            return;
          }
          metrics.text().then(
            (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
            (err: unknown) => {
              options.log.error({ err }, 'metrics collection failed');
              res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
            },
          );
        });
        s.once('error', reject);
        s.listen(options.port, options.host, () => {
          server = s;
          options.log.info({ port: options.port }, 'metrics listening');
          resolve();
        });
      }),
    stop: () => new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve()))),
  };
}
