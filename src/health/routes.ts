import { z } from 'zod';
import { AppError, HttpErrorCodes } from '../errors/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import type { Deps } from '../deps.js';

export interface HealthProbe {
  name: string;
  check(signal: AbortSignal): Promise<void>;
}

/** What /readyz checks, and notes it shows beside the checks (e.g. that voice is only simulated). */
export interface Readiness {
  probes: HealthProbe[];
  notes: Record<string, string>;
}

export function readinessOf(deps: Pick<Deps, 'sql' | 'store' | 'voiceNote'>): Readiness {
  return {
    probes: [
      { name: 'database', check: async () => void (await deps.sql`select 1`) },
      { name: 'store', check: () => deps.store.ping() },
    ],
    notes: deps.voiceNote === undefined ? {} : { voice: deps.voiceNote },
  };
}

/**
 * Each probe's deadline: /readyz answers within this (plus scheduling), 503 when a dependency has not answered by
 * then (a load balancer's probe must never hang on a stalled dependency). The probes run at once.
 */
export const READINESS_DEADLINE_MS = 1000;

/**
 * GET /healthz: the process answers. GET /readyz: its database and store answer, and it is not draining; `notes`
 * (only when there are any) say what runs degraded by choice of the environment, not by failure.
 */
export function healthRoutes({ probes, notes }: Readiness, isDraining: () => boolean): AnyRoute[] {
  const hasNotes = Object.keys(notes).length > 0;
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
        response: {
          200: z.object({
            status: z.literal('ready'),
            checks: z.record(z.string(), z.literal('ok')),
            notes: z.record(z.string(), z.string()).optional(),
          }),
        },
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
        return reply.json(hasNotes ? { status: 'ready', checks, notes } : { status: 'ready', checks });
      },
    }),
  ];
}
