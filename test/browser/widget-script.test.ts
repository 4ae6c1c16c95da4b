import t from 'tap';
import { get, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { AppError } from '../../src/errors/index.js';
import type { RequestContext } from '../../src/http/index.js';
import { webAssetRoutes } from '../../src/web-assets/index.js';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp } from '../helpers/app.js';
import { scratchDir } from '../helpers/scratch.js';

/** GET /widget/v1/parley.js and its worklet module: what a site's page and the browser's cache see. */
const BUDGET_GZIP_BYTES = 30 * 1024;

function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

t.test(
  'the widget is served cacheable, cross-origin, with a content-hash ETag, and within 30 KB gzipped',
  async (t) => {
    const built = await buildWidget();
    const app = await startTestApp(t);
    let servedGzip = 0;
    for (const name of ['parley.js', 'parley-audio.js']) {
      const url = `${app.url}/widget/v1/${name}`;
      const res = await fetch(url, { headers: { origin: 'https://shop.example' } });
      t.equal(res.status, 200, `${name}: 200`);
      t.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
      t.equal(res.headers.get('access-control-allow-origin'), '*', 'any page may load it');
      t.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
      t.match(res.headers.get('cache-control'), /^public, max-age=86400/);
      const etag = res.headers.get('etag');
      t.match(etag, /^"[0-9a-f]{16}"$/, 'a content-hash ETag');
      const body = Buffer.from(await res.arrayBuffer());
      t.equal(body.length, built.find((f) => f.name === name)!.bytes, 'the built file');
      t.notMatch(body.toString(), /\beval\(|new Function\(/, 'no eval');
      servedGzip += gzipSync(body, { level: 9 }).length;

      const again = await fetch(url, { headers: { 'if-none-match': etag! } });
      t.equal(again.status, 304, 'If-None-Match with the current ETag: 304');
      t.equal(again.headers.get('etag'), etag);
      t.equal((await again.arrayBuffer()).byteLength, 0);
      const stale = await fetch(url, { headers: { 'if-none-match': '"0000000000000000"' } });
      t.equal(stale.status, 200, 'another ETag: the file');
      await stale.arrayBuffer();

      // fetch decodes gzip by itself; node:http shows the bytes on the wire.
      const zipped = await rawGet(url, { 'accept-encoding': 'gzip, deflate, br' });
      t.equal(zipped.headers['content-encoding'], 'gzip');
      t.ok(gunzipSync(zipped.body).equals(body), 'gzip of the same bytes');
      const plain = await rawGet(url, {});
      t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: plain');
      t.ok(plain.body.equals(body));

      const hashed = await fetch(`${url}?v=${etag!.slice(1, -1)}`);
      t.equal(
        hashed.headers.get('cache-control'),
        'public, max-age=31536000, immutable',
        'the hashed URL is immutable',
      );
      await hashed.arrayBuffer();
    }
    t.ok(
      servedGzip <= BUDGET_GZIP_BYTES,
      `served widget code is ${servedGzip} bytes gzipped (budget ${BUDGET_GZIP_BYTES})`,
    );
    t.comment(
      `widget: ${built.map((f) => `${f.name} ${f.bytes} B (${f.gzipBytes} B gz)`).join(', ')}; total ${servedGzip} B gz`,
    );

    const openapi = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    t.notOk(
      Object.keys(openapi.paths).some((p) => p.startsWith('/widget/')),
      'not part of the v1 API document',
    );
  },
);

t.test('a server without the built widget answers 503 WEB_ASSET_NOT_BUILT, not a 500', async (t) => {
  const [route] = webAssetRoutes({ dir: scratchDir('parley-no-widget-') });
  const ctx = { query: {}, headers: {} } as unknown as RequestContext<unknown, { v?: string }, unknown>;
  const err = await Promise.resolve(route!.handler(ctx)).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof AppError);
  t.match(err, { status: 503, code: 'WEB_ASSET_NOT_BUILT' });
});
