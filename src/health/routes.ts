import { z } from 'zod';
import { AppError, HttpErrorCodes } from '../errors/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';

export interface HealthProbe {
  name: string;
  check(signal: AbortSignal): Promise<void>;
}

/**
 * Each probe's deadline: /readyz answers within this (plus scheduling), 503 when a dependency has not answered by
 * then (a load balancer's probe must never hang on a stalled dependency). The probes run at once.
 */
export const READINESS_DEADLINE_MS = 1000;

/** GET /healthz: the process answers. GET /readyz: its database and store answer, and it is not draining. */
export function healthRoutes(probes: HealthProbe[], isDraining: () => boolean): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      auth: 'none',
      schemas: { response: { 200: z.object({ status: z.literal('ok') }) } },
      openapi: { summary: 'Liveness', hidden: true },
      handler: () => reply.json({ status: 'ok' }),
    }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      auth: 'none',
      schemas: {
        response: { 200: z.object({ status: z.literal('ready'), checks: z.record(z.string(), z.literal('ok')) }) },
      },
      openapi: { summary: 'Readiness', hidden: true, errors: { 503: 'Draining, or a dependency does not answer' } },
      handler: async (ctx) => {
        if (isDraining()) throw new AppError(HttpErrorCodes.NOT_READY, 503, 'This instance is shutting down.');
        const checks: Record<string, 'ok'> = {};
        const failed: string[] = [];
        await Promise.all(
          probes.map(async (probe) => {
            const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(READINESS_DEADLINE_MS)]);
            try {
              await Promise.race([
                probe.check(signal),
                new Promise((_, reject) =>
                  signal.addEventListener('abort', () => reject(new Error('timeout')), { once: true }),
                ),
              ]);
              checks[probe.name] = 'ok';
            } catch (err) {
              failed.push(probe.name);
              ctx.log.warn({ probe: probe.name, err: { message: (err as Error).message } }, 'readiness probe failed');
            }
          }),
        );
        if (failed.length > 0) {
          throw new AppError(HttpErrorCodes.NOT_READY, 503, 'A dependency does not answer.', {
            details: { failed },
            headers: { 'retry-after': '2' },
          });
        }
        return reply.json({ status: 'ready', checks });
      },
    }),
  ];
}
