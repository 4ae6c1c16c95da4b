import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AppError } from '../errors/index.js';
import { defineRoute, staticAsset, staticAssetReply, type AnyRoute, type StaticAsset } from '../http/index.js';

/**
 * The embeddable widget's files (web/widget, built by `npm run build:widget` into dist/widget/), served at
 * /widget/v1/<file>: loadable from any page (Access-Control-Allow-Origin: *, Cross-Origin-Resource-Policy:
 * cross-origin), with a content-hash ETag (304 on If-None-Match), gzip when accepted, and long-lived caching.
 * A request whose `?v=` names the current content hash (how parley.js loads its worklet) is cached as immutable.
 * Outside the v1 API document: these are scripts, not API operations.
 */
const WebAssetCodes = {
  /** 503: the widget was not built (run `npm run build:widget`; `npm start` and `npm test` do). */
  NOT_BUILT: 'WEB_ASSET_NOT_BUILT',
} as const;

const WIDGET_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'widget');
const FILES = ['parley.js', 'parley-audio.js'] as const;
/** A day for the unversioned URL (a new release reaches every visitor within one), a year for hashed ones. */
const CACHE_UNVERSIONED = 'public, max-age=86400, stale-while-revalidate=604800';
const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';

interface Asset extends StaticAsset {
  mtimeMs: number;
  size: number;
  hash: string;
}

/** Reads a file once and again only when it changed on disk (a rebuild is served without a restart). */
function assetCache(dir: string) {
  const cache = new Map<string, Asset>();
  return async (name: string): Promise<Asset | undefined> => {
    const path = join(dir, name);
    let info;
    try {
      info = await stat(path);
    } catch {
      return undefined;
    }
    const cached = cache.get(name);
    if (cached !== undefined && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached;
    const body = await readFile(path);
    const asset: Asset = { mtimeMs: info.mtimeMs, size: info.size, ...staticAsset(body) };
    cache.set(name, asset);
    return asset;
  };
}

export function webAssetRoutes(options: { dir?: string } = {}): AnyRoute[] {
  const load = assetCache(options.dir ?? WIDGET_DIR);
  return FILES.map((name) =>
    defineRoute({
      method: 'GET',
      path: `/widget/v1/${name}`,
      auth: 'none',
      schemas: {
        query: z.object({
          v: z.string().max(64).optional().describe('Content hash; when current, the answer is immutable.'),
        }),
        response: { 200: z.string().describe('JavaScript'), 304: z.undefined().describe('Not modified') },
      },
      openapi: {
        summary: name === 'parley.js' ? 'The <parley-assistant> widget script' : "The widget's AudioWorklet module",
        hidden: true,
      },
      handler: async (ctx) => {
        const asset = await load(name);
        if (asset === undefined)
          throw new AppError(
            WebAssetCodes.NOT_BUILT,
            503,
            'The widget is not built on this server (npm run build:widget).',
          );
        return staticAssetReply(ctx.headers, asset, 'text/javascript; charset=utf-8', {
          'cache-control': ctx.query.v === asset.hash ? CACHE_IMMUTABLE : CACHE_UNVERSIONED,
          'access-control-allow-origin': '*',
          'cross-origin-resource-policy': 'cross-origin',
          'x-content-type-options': 'nosniff',
        });
      },
    }),
  );
}
