import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineRoute, reply, staticAssetReply, type AnyRoute, type Reply, type RequestContext } from '../http/index.js';
import { loadAssets, type Asset } from './assets.js';
import { dashboardErrors } from './errors.js';

/** Where `npm run build:dashboard` writes the app (same relative place from src/dashboard and dist/dashboard). */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../web/dashboard/dist/', import.meta.url));

/**
 * The dashboard's own policy: everything from this origin, nothing inline, nothing framed. `media-src blob:` lets
 * the recording player and the playground's voice play audio; `connect-src 'self'` covers fetch, SSE and the
 * voice WebSocket (same origin; CSP 3 matches ws: for 'self').
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

/** Hashed names (Vite's `assets/name-<hash>.ext`) never change content: cache for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The HTML names the current hashes, so the browser revalidates it every time (ETag makes that a 304). */
const REVALIDATE = 'no-cache';

export interface DashboardOptions {
  /** The built app (default web/dashboard/dist). */
  dir?: string;
  /** Whether POST /api/auth/signup exists (SIGNUP_ENABLED), told to the sign-in page. */
  signupEnabled: boolean;
  /** The app's whole route table (read on request): tells whether this server serves the voice widget. */
  siblings: () => readonly AnyRoute[];
  /** The transports this server's voice takes (the playground never tries another); default both. */
  voiceTransports?: ReadonlyArray<'webrtc' | 'websocket'>;
  /**
   * While the server has no user yet, the command that creates the first owner (the one the start-up line prints),
   * so the sign-in page can say it; null once an owner exists. Default: never told.
   */
  createOwnerCommand?: () => Promise<string | null>;
}

/** The <parley-assistant> script; the playground loads it for voice when the server has that route. */
export const WIDGET_SCRIPT_PATH = '/widget/v1/parley.js';

/**
 * GET /dashboard and /dashboard/*: the owner web app, served from memory. Paths with a file extension are files
 * (404 when missing, never the index page); every other path is a client route and gets index.html.
 * GET /api/dashboard/config tells the app what the server offers (sign-up, the voice widget). None is in the v1
 * document.
 */
export function dashboardRoutes(options: DashboardOptions): AnyRoute[] {
  const dir = options.dir ?? DEFAULT_DASHBOARD_DIR;
  let assets: Map<string, Asset> | null = null;
  // Loaded on first use (and retried while missing), so building after the server started works in development.
  const current = () => (assets ??= loadAssets(dir));

  const serve = (ctx: RequestContext<unknown, unknown, unknown>): Reply => {
    const files = current();
    if (files === null) throw dashboardErrors.notBuilt();
    const rel = ctx.path === '/dashboard' ? '' : ctx.path.slice('/dashboard/'.length);
    const last = rel.slice(rel.lastIndexOf('/') + 1);
    const isFile = rel.startsWith('assets/') || last.includes('.');
    let name = 'index.html';
    if (isFile) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(rel);
      } catch {
        throw dashboardErrors.assetNotFound(ctx.path);
      }
      if (!files.has(decoded)) throw dashboardErrors.assetNotFound(ctx.path);
      name = decoded;
    }
    const asset = files.get(name)!;
    const cacheControl =
      name === 'index.html' ? REVALIDATE : rel.startsWith('assets/') ? IMMUTABLE : 'public, max-age=3600';
    return staticAssetReply(ctx.headers, asset, asset.contentType, {
      ...SECURITY_HEADERS,
      'cache-control': cacheControl,
    });
  };

  const page = {
    200: z.string().describe('index.html or a built file'),
    304: z.undefined().describe('Not modified (ETag)'),
  };
  const openapi = {
    tags: ['dashboard'],
    hidden: true as const,
    errors: { 404: 'No such file', 503: 'The dashboard is not built' },
  };
  const pages: Array<[string, string]> = [
    ['/dashboard', 'The owner dashboard (index page)'],
    ['/dashboard/*', 'The owner dashboard: its files, and index.html for client routes'],
  ];
  return [
    ...pages.map(([path, summary]) =>
      defineRoute({
        method: 'GET',
        path,
        auth: 'none',
        schemas: { response: page },
        openapi: { summary, ...openapi },
        handler: serve,
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/api/dashboard/config',
      auth: 'none',
      schemas: {
        response: {
          200: z.object({
            signupEnabled: z.boolean(),
            widgetScript: z.string().nullable(),
            voiceTransports: z
              .array(z.enum(['webrtc', 'websocket']))
              .describe("The transports this server's voice takes: the playground tries no other."),
            createOwner: z
              .string()
              .nullable()
              .describe('While no user exists: the command that creates the first owner (null once one exists).'),
          }),
        },
      },
      openapi: {
        summary: 'What the dashboard may offer (sign-up, the voice widget)',
        tags: ['dashboard'],
        hidden: true,
      },
      handler: async () =>
        reply.json(
          {
            createOwner: (await options.createOwnerCommand?.()) ?? null,
            signupEnabled: options.signupEnabled,
            widgetScript: options.siblings().some((r) => r.method === 'GET' && r.path === WIDGET_SCRIPT_PATH)
              ? WIDGET_SCRIPT_PATH
              : null,
            voiceTransports: [...(options.voiceTransports ?? ['webrtc', 'websocket'])],
          },
          200,
          { 'cache-control': 'no-store' },
        ),
    }),
  ];
}
