import t from 'tap';
import { connect } from 'node:net';
import { z } from 'zod';
import { AppError } from '../../src/errors/index.js';
import { defineRoute, reply } from '../../src/http/index.js';
import { waitFor } from '../helpers/wait.js';
import { startShell } from '../helpers/shell.js';

const errorShape = { error: String, code: String, requestId: String };

function rawRequest(port: number, text: string, opts: { destroyAfterMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(data));
    socket.write(text);
    if (opts.destroyAfterMs !== undefined) setTimeout(() => socket.destroy(), opts.destroyAfterMs);
  });
}

t.test('validated JSON routes, 404, 405 and the error body', async (t) => {
  const { url } = await startShell(t, {
    routes: [
      defineRoute({
        method: 'GET',
        path: '/items/:itemId',
        auth: 'none',
        schemas: {
          params: z.object({ itemId: z.string().regex(/^it_\w+$/) }),
          query: z.object({ limit: z.coerce.number().int().min(1).max(10).default(5) }),
          response: { 200: z.object({ id: z.string(), limit: z.number() }) },
        },
        openapi: { summary: 'get item' },
        handler: (ctx) => reply.json({ id: ctx.params.itemId, limit: ctx.query.limit }),
      }),
      defineRoute({
        method: 'POST',
        path: '/items',
        auth: 'none',
        schemas: {
          body: z.object({ name: z.string().min(1).max(20) }),
          response: { 201: z.object({ name: z.string() }) },
        },
        openapi: { summary: 'create item' },
        handler: (ctx) => reply.json({ name: ctx.body.name }, 201),
      }),
    ],
  });

  let res = await fetch(`${url}/items/it_abc?limit=3`, { headers: { 'x-request-id': 'req-123' } });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-request-id'), 'req-123', 'a sane incoming request id is echoed');
  t.same(await res.json(), { id: 'it_abc', limit: 3 });

  res = await fetch(`${url}/items/nope?limit=99`);
  t.equal(res.status, 400);
  const bad = (await res.json()) as { code: string; details: { issues: Array<{ path: string }> }; requestId: string };
  t.equal(bad.code, 'VALIDATION_FAILED');
  t.ok(
    bad.details.issues.some((i) => i.path === 'params.itemId'),
    'path parameter issue named',
  );
  t.equal(bad.requestId, res.headers.get('x-request-id'), 'body and header carry the same request id');

  res = await fetch(`${url}/nowhere`);
  t.equal(res.status, 404);
  t.match(await res.json(), { ...errorShape, code: 'HTTP_NOT_FOUND' });

  res = await fetch(`${url}/items`, { method: 'DELETE' });
  t.equal(res.status, 405);
  t.equal(res.headers.get('allow'), 'POST');
  t.match(await res.json(), { ...errorShape, code: 'HTTP_METHOD_NOT_ALLOWED' });

  res = await fetch(`${url}/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name": ',
  });
  t.equal(res.status, 400);
  t.match(await res.json(), { code: 'HTTP_MALFORMED_JSON' });

  res = await fetch(`${url}/items`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'name=x' });
  t.equal(res.status, 415);
  t.match(await res.json(), { code: 'HTTP_UNSUPPORTED_MEDIA_TYPE' });

  res = await fetch(`${url}/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'x'.repeat(21) }),
  });
  t.equal(res.status, 400);
  t.match(await res.json(), { code: 'VALIDATION_FAILED', details: { issues: [{ path: 'body.name' }] } });

  res = await fetch(`${url}/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ok' }),
  });
  t.equal(res.status, 201);
  t.same(await res.json(), { name: 'ok' });
});

t.test('body limit: declared and streamed bodies over the limit get 413 with a code', async (t) => {
  let calls = 0;
  const { url, port } = await startShell(t, {
    bodyLimitBytes: 100,
    routes: [
      defineRoute({
        method: 'POST',
        path: '/echo',
        auth: 'none',
        schemas: { body: z.object({ text: z.string() }), response: { 200: z.object({ length: z.number() }) } },
        openapi: { summary: 'echo' },
        handler: (ctx) => {
          calls++;
          return reply.json({ length: ctx.body.text.length });
        },
      }),
    ],
  });
  const res = await fetch(`${url}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'x'.repeat(200) }),
  });
  t.equal(res.status, 413);
  t.match(await res.json(), { code: 'HTTP_BODY_TOO_LARGE', details: { limitBytes: 100 } });

  // Chunked: no content-length, the limit is enforced while reading.
  const big = JSON.stringify({ text: 'y'.repeat(300) });
  const chunked = `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`;
  const answer = await rawRequest(port, chunked, { destroyAfterMs: 500 });
  t.match(answer, /^HTTP\/1\.1 413/);
  t.match(answer, /HTTP_BODY_TOO_LARGE/);
  t.equal(calls, 0, 'the handler never ran');

  const ok = await fetch(`${url}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'small' }),
  });
  t.equal(ok.status, 200);
  t.same(await ok.json(), { length: 5 });
});

t.test(
  'client aborts mid-body and mid-handler: nothing crashes, nothing is written, the next request works',
  async (t) => {
    let handlerCalls = 0;
    let sawAbort: () => void = () => undefined;
    const abortSeen = new Promise<void>((resolve) => (sawAbort = resolve));
    const { url, port, server } = await startShell(t, {
      routes: [
        defineRoute({
          method: 'POST',
          path: '/upload',
          auth: 'none',
          schemas: { body: z.object({}).passthrough(), response: { 200: z.object({ ok: z.boolean() }) } },
          openapi: { summary: 'upload' },
          handler: () => {
            handlerCalls++;
            return reply.json({ ok: true });
          },
        }),
        defineRoute({
          method: 'GET',
          path: '/slow',
          auth: 'none',
          schemas: { response: { 200: z.object({ ok: z.boolean() }) } },
          openapi: { summary: 'slow' },
          handler: async (ctx) => {
            await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
            sawAbort();
            return reply.json({ ok: true }); // written into a closed response: must be a no-op
          },
        }),
        defineRoute({
          method: 'GET',
          path: '/ping',
          auth: 'none',
          schemas: { response: { 200: z.object({ pong: z.boolean() }) } },
          openapi: { summary: 'ping' },
          handler: () => reply.json({ pong: true }),
        }),
      ],
    });

    await rawRequest(
      port,
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"partial": "',
      { destroyAfterMs: 50 },
    );
    t.equal(handlerCalls, 0, 'a body that never completed never reaches the handler');

    const controller = new AbortController();
    const pending = fetch(`${url}/slow`, { signal: controller.signal }).catch((err: Error) => err);
    await waitFor(() => server.inFlight === 1, 'the slow request to arrive');
    t.equal(server.inFlight, 1, 'the slow request is in flight');
    controller.abort();
    await abortSeen;
    t.type(await pending, Error, 'client side saw its own abort');
    await waitFor(() => server.inFlight === 0, 'the aborted request to be counted out');
    t.equal(server.inFlight, 0, 'in-flight count returns to zero');

    const res = await fetch(`${url}/ping`);
    t.same(await res.json(), { pong: true }, 'server still serves');
  },
);

t.test(
  'unexpected exceptions are a 500 with the request id, logged once; AppError maps reason and headers',
  async (t) => {
    const { url, logs } = await startShell(t, {
      routes: [
        defineRoute({
          method: 'GET',
          path: '/boom',
          auth: 'none',
          schemas: { response: { 200: z.object({}) } },
          openapi: { summary: 'boom' },
          handler: async () => {
            await Promise.resolve();
            throw new Error('database exploded: password=hunter2');
          },
        }),
        defineRoute({
          method: 'GET',
          path: '/refuse',
          auth: 'none',
          schemas: { response: { 200: z.object({}) } },
          openapi: { summary: 'refuse' },
          handler: () => {
            throw new AppError('VOICE_UNAVAILABLE', 403, 'Voice is not available right now.', {
              reason: 'voice_unavailable',
              headers: { 'retry-after': '7' },
            });
          },
        }),
      ],
    });
    const res = await fetch(`${url}/boom`);
    t.equal(res.status, 500);
    const body = (await res.json()) as { code: string; error: string; requestId: string };
    t.equal(body.code, 'INTERNAL_ERROR');
    t.notMatch(body.error, /exploded|hunter2/, 'internals are not shown to the caller');
    const errors = logs.lines.filter((l) => l['msg'] === 'unhandled error in request');
    t.equal(errors.length, 1, 'logged exactly once');
    t.equal(errors[0]?.['requestId'], body.requestId, 'the log line carries the request id');

    const refused = await fetch(`${url}/refuse`);
    t.equal(refused.status, 403);
    t.equal(refused.headers.get('retry-after'), '7');
    t.match(await refused.json(), { code: 'VOICE_UNAVAILABLE', reason: 'voice_unavailable' });
  },
);

t.test('CORS: preflight answered and Origin reflected on keyless routes only', async (t) => {
  const { url } = await startShell(t, {
    routes: [
      defineRoute({
        method: 'POST',
        path: '/public',
        auth: 'none',
        cors: true,
        schemas: { body: z.object({}), response: { 200: z.object({ ok: z.boolean() }) } },
        openapi: { summary: 'public' },
        handler: () => reply.json({ ok: true }),
      }),
      defineRoute({
        method: 'GET',
        path: '/private',
        auth: 'none',
        schemas: { response: { 200: z.object({ ok: z.boolean() }) } },
        openapi: { summary: 'private' },
        handler: () => reply.json({ ok: true }),
      }),
    ],
  });
  const pre = await fetch(`${url}/public`, {
    method: 'OPTIONS',
    headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
  });
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), 'https://shop.example');
  t.match(pre.headers.get('access-control-allow-methods'), /POST/);
  const res = await fetch(`${url}/public`, {
    method: 'POST',
    headers: { origin: 'https://shop.example', 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(res.headers.get('access-control-allow-origin'), 'https://shop.example');
  const priv = await fetch(`${url}/private`, { headers: { origin: 'https://shop.example' } });
  t.equal(priv.headers.get('access-control-allow-origin'), null, 'no CORS on non-keyless routes');
  const privPre = await fetch(`${url}/private`, { method: 'OPTIONS', headers: { origin: 'https://shop.example' } });
  t.equal(privPre.status, 405);
});
