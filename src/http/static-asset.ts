import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { reply } from './reply.js';
import type { Reply } from './types.js';

/**
 * Serving built files from memory (the widget's scripts, the dashboard's app): one strong content-hash ETag, a
 * gzip copy when it is smaller, and the conditional/negotiated answer. The callers choose paths and cache policy.
 */
export interface StaticAsset {
  readonly body: Buffer;
  /** Absent when gzip would not be smaller (or the type does not compress). */
  readonly gzip: Buffer | undefined;
  /** Quoted strong ETag. */
  readonly etag: string;
}

/** The content hash naming a built file: 16 hex digits of its SHA-256 (also what `?v=` URLs carry). */
export function contentHash(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

/** The asset's validators and gzip copy (level 9: built files are compressed once, served many times). */
export function staticAsset(body: Buffer, options: { compress?: boolean } = {}): StaticAsset & { hash: string } {
  const hash = contentHash(body);
  const gzip = options.compress === false ? undefined : gzipSync(body, { level: 9 });
  return { body, gzip: gzip !== undefined && gzip.length < body.length ? gzip : undefined, etag: `"${hash}"`, hash };
}

/** Weak comparison of If-None-Match against one strong ETag (RFC 9110 §13.1.2); `*` matches. */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

/** `gzip` (or `*`) listed and not refused with q=0 (RFC 9110 §12.5.3). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * 304 when If-None-Match matches, else 200 with the gzip copy when the client accepts it (Content-Encoding set),
 * else the body. `headers` (cache policy and the like) go on both; ETag and `Vary: Accept-Encoding` are added.
 */
export function staticAssetReply(
  request: Record<string, string | undefined>,
  asset: StaticAsset,
  contentType: string,
  headers: Record<string, string>,
): Reply {
  const common = { ...headers, etag: asset.etag, vary: 'Accept-Encoding' };
  if (matchesEtag(request['if-none-match'], asset.etag)) return reply.empty(304, common);
  if (asset.gzip !== undefined && acceptsGzip(request['accept-encoding'])) {
    return reply.bytes(asset.gzip, contentType, 200, { ...common, 'content-encoding': 'gzip' });
  }
  return reply.bytes(asset.body, contentType, 200, common);
}
