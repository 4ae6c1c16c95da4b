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

/** `extra`: the capabilities' own dependencies (the recordings bucket, when RECORDINGS_STORE=s3). */
export function readinessOf(deps: Pick<Deps, 'sql' | 'store' | 'voiceNote'>, extra: HealthProbe[] = []): Readiness {
  return {
    probes: [
      { name: 'database', check: async () => void (await deps.sql`select 1`) },
      { name: 'store', check: () => deps.store.ping() },
      ...extra,
    ],
    notes: deps.voiceNote === undefined ? {} : { voice: deps.voiceNote },
  };
}

/**
 * Each probe's deadline: /readyz answers within this (plus scheduling), 503 when a dependency has not answered by
 * then (a load balancer's probe must never hang on a stalled dependency). The probes run at once. Under the proxy's
 * check timeout (3 s), and long enough that a busy moment of a database every instance shares does not make every
 * instance unready at once (at 1 s, a loaded machine left the proxy with no instance to send calls to).
 */
export const READINESS_DEADLINE_MS = 2500;

/** Where a browser that opens the server's address is sent: the owner dashboard. */
export const DASHBOARD_PATH = '/dashboard/';

/** Whether a request's Accept header asks for a page (a browser's address bar) rather than data. */
function wantsPage(accept: string | undefined): boolean {
  return accept !== undefined && /\btext\/html\b/i.test(accept);
}

/**
 * GET /: a browser (Accept: text/html) is redirected to the dashboard; any other client gets a small JSON map of where
 * things are, so `curl` and monitors still see JSON, never a page.
 */
export function rootRoute(): AnyRoute {
  return defineRoute({
    method: 'GET',
    path: '/',
    auth: 'none',
    schemas: {
      response: {
        200: z.object({
          service: z.literal('parley'),
          dashboard: z.string(),
          api: z.string(),
          openapi: z.string(),
          health: z.string(),
        }),
        302: z.undefined().describe('A browser: to the dashboard'),
      },
    },
    openapi: { summary: 'Where things are (browsers: a redirect to the dashboard)', hidden: true },
    handler: (ctx) =>
      wantsPage(ctx.headers['accept'])
        ? reply.empty(302, { location: DASHBOARD_PATH, 'cache-control': 'no-store' })
        : reply.json({
            service: 'parley',
            dashboard: DASHBOARD_PATH,
            api: '/api/v1',
            openapi: '/api/v1/openapi.json',
            health: '/readyz',
          }),
  });
}

/**
 * GET / (rootRoute, above). GET /healthz: the process answers. GET /readyz: its database and store answer, and it is not draining; `notes`
 * (only when there are any) say what runs degraded by choice of the environment, not by failure.
 */
export function healthRoutes({ probes, notes }: Readiness, isDraining: () => boolean): AnyRoute[] {
  const hasNotes = Object.keys(notes).length > 0;
  return [
    rootRoute(),
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
