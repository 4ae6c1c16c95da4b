import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { staticAsset, type StaticAsset } from '../http/index.js';

/** One built file, held in memory with its validators and (when worth it) a gzip copy. */
export interface Asset extends StaticAsset {
  readonly contentType: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.map', '.svg', '.txt']);

export function contentTypeOf(path: string): string {
  return TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Reads every file of a built app (a few hundred KB) into a map keyed by its URL path relative to the app root
 * (`index.html`, `assets/index-abc123.js`). Lookups never touch the file system, so no request path can reach a
 * file outside the build. Returns null when the build is missing (no index.html).
 */
export function loadAssets(dir: string): Map<string, Asset> | null {
  try {
    if (!statSync(join(dir, 'index.html')).isFile()) return null;
  } catch {
    return null;
  }
  const assets = new Map<string, Asset>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const body = readFileSync(full);
        const ext = extname(entry.name).toLowerCase();
        const { gzip, etag } = staticAsset(body, { compress: COMPRESSIBLE.has(ext) && body.length > 512 });
        assets.set(relative(dir, full).split(sep).join('/'), {
          body,
          gzip,
          etag,
          contentType: contentTypeOf(entry.name),
        });
      }
    }
  };
  walk(dir);
  return assets;
}
