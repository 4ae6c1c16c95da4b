import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { acceptsGzip, matchesEtag, staticAsset, staticAssetReply } from '../../src/http/index.js';

/** The one static-file helper the widget scripts (src/web-assets) and the dashboard (src/dashboard) both serve with. */

const text = Buffer.from('export const x = 1;\n'.repeat(200));

t.test('validators: a content-hash ETag; If-None-Match compared weakly, lists and * included', async (t) => {
  const a = staticAsset(text);
  t.match(a.etag, /^"[0-9a-f]{16}"$/);
  t.equal(a.etag, `"${a.hash}"`);
  t.equal(staticAsset(Buffer.from(text)).etag, a.etag, 'same bytes, same ETag');
  t.not(staticAsset(Buffer.from('other')).etag, a.etag);
  t.ok(matchesEtag(a.etag, a.etag));
  t.ok(matchesEtag(`"nope", W/${a.etag}`, a.etag), 'weak form in a list');
  t.ok(matchesEtag(' * ', a.etag));
  t.notOk(matchesEtag(undefined, a.etag));
  t.notOk(matchesEtag('"nope"', a.etag));
  t.notOk(matchesEtag(a.etag.slice(0, -2) + '"', a.etag), 'a prefix is not a match');
});

t.test('gzip negotiation: listed and not q=0; the copy only when smaller', async (t) => {
  t.ok(acceptsGzip('gzip, deflate, br'));
  t.ok(acceptsGzip('br;q=1.0, GZIP;q=0.5'));
  t.ok(acceptsGzip('*'));
  t.notOk(acceptsGzip('gzip;q=0'));
  t.notOk(acceptsGzip('br'));
  t.notOk(acceptsGzip(undefined));
  t.same(gunzipSync(staticAsset(text).gzip!), text, 'the copy is the same bytes');
  t.equal(staticAsset(Buffer.from('ab')).gzip, undefined, 'not kept when it would be larger');
  t.equal(staticAsset(text, { compress: false }).gzip, undefined, 'not made when asked not to');
});

t.test('the answer: 304 on a match, gzip when accepted, else the body; caller headers on every answer', async (t) => {
  const a = staticAsset(text);
  const extra = { 'cache-control': 'no-cache' };
  const notModified = staticAssetReply(
    { 'if-none-match': a.etag, 'accept-encoding': 'gzip' },
    a,
    'text/javascript',
    extra,
  );
  t.match(notModified, {
    kind: 'empty',
    status: 304,
    headers: { etag: a.etag, 'cache-control': 'no-cache', vary: 'Accept-Encoding' },
  });
  const zipped = staticAssetReply({ 'accept-encoding': 'gzip' }, a, 'text/javascript', extra);
  t.match(zipped, {
    kind: 'bytes',
    status: 200,
    contentType: 'text/javascript',
    headers: { 'content-encoding': 'gzip', etag: a.etag, 'cache-control': 'no-cache' },
  });
  t.same((zipped as { body: Buffer }).body, a.gzip);
  const plain = staticAssetReply({}, a, 'text/javascript', extra);
  t.same((plain as { body: Buffer }).body, text);
  t.equal((plain as { headers: Record<string, string> }).headers['content-encoding'], undefined);
  t.same(extra, { 'cache-control': 'no-cache' }, "the caller's headers are not modified");
});
