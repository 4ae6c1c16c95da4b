import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { z } from 'zod';
import { defineRoute, fileReply, parseRange, reply } from '../../src/http/index.js';
import { startShell } from '../helpers/shell.js';
import { scratchDir } from '../helpers/scratch.js';

t.test(
  'parseRange: one range, suffixes, open ends; garbage means the whole body; past the end is unsatisfiable',
  async (t) => {
    t.same(parseRange(undefined, 100), { kind: 'full' });
    t.same(parseRange('bytes=0-9', 100), { kind: 'partial', start: 0, end: 9 });
    t.same(parseRange('bytes=90-', 100), { kind: 'partial', start: 90, end: 99 });
    t.same(parseRange('bytes=90-500', 100), { kind: 'partial', start: 90, end: 99 });
    t.same(parseRange('bytes=-10', 100), { kind: 'partial', start: 90, end: 99 });
    t.same(parseRange('bytes=-500', 100), { kind: 'partial', start: 0, end: 99 });
    t.same(parseRange('bytes=100-', 100), { kind: 'unsatisfiable' });
    t.same(parseRange('bytes=-0', 100), { kind: 'unsatisfiable' });
    t.same(parseRange('bytes=5-2', 100), { kind: 'full' });
    t.same(parseRange('bytes=0-1,5-6', 100), { kind: 'full' }, 'several ranges: the whole body (allowed by RFC 9110)');
    t.same(parseRange('items=0-1', 100), { kind: 'full' });
  },
);

t.test(
  'fileReply over the shell: 200 with Content-Length, 206 with Content-Range, 416, 404; streamed to a slow reader',
  async (t) => {
    const dir = scratchDir('parley-file-');
    const body = Buffer.alloc(3 * 1024 * 1024 + 7);
    for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
    writeFileSync(join(dir, 'a.bin'), body);
    writeFileSync(join(dir, 'empty.bin'), Buffer.alloc(0));
    const route = defineRoute({
      method: 'GET',
      path: '/files/:name',
      auth: 'none',
      schemas: { params: z.object({ name: z.string() }), response: { 200: z.unknown(), 206: z.unknown() } },
      openapi: { summary: 'file', hidden: true },
      handler: async (ctx) =>
        (await fileReply(join(dir, ctx.params.name), {
          contentType: 'application/octet-stream',
          range: ctx.headers['range'],
          chunkBytes: 16 * 1024,
        })) ?? reply.json({ error: 'none' }, 404),
    });
    const { url, port } = await startShell(t, { routes: [route] });

    const full = await fetch(`${url}/files/a.bin`);
    t.equal(full.status, 200);
    t.equal(full.headers.get('content-length'), String(body.length));
    t.equal(full.headers.get('accept-ranges'), 'bytes');
    t.same(Buffer.from(await full.arrayBuffer()), body);

    const part = await fetch(`${url}/files/a.bin`, { headers: { range: 'bytes=1000-200999' } });
    t.equal(part.status, 206);
    t.equal(part.headers.get('content-range'), `bytes 1000-200999/${body.length}`);
    t.equal(part.headers.get('content-length'), '200000');
    t.same(Buffer.from(await part.arrayBuffer()), body.subarray(1000, 201000));

    const none = await fetch(`${url}/files/a.bin`, { headers: { range: `bytes=${body.length}-` } });
    t.equal(none.status, 416);
    t.equal(none.headers.get('content-range'), `bytes */${body.length}`);
    await none.arrayBuffer();
    const empty = await fetch(`${url}/files/empty.bin`);
    t.equal(empty.status, 200);
    t.equal((await empty.arrayBuffer()).byteLength, 0);
    t.equal((await fetch(`${url}/files/missing.bin`)).status, 404);

    // A reader that pauses for a while still gets every byte, in order (the producer waited for onWritable).
    const received = await new Promise<Buffer>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/files/a.bin' }, (res) => {
        const chunks: Buffer[] = [];
        res.pause();
        setTimeout(() => res.resume(), 300);
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    t.ok(received.equals(body), 'the slow reader got the whole file');
  },
);
