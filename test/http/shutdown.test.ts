import t from 'tap';
import { z } from 'zod';
import { defineRoute, reply } from '../../src/http/index.js';
import { waitFor } from '../helpers/wait.js';
import { ndjsonRoute, startShell } from '../helpers/shell.js';

t.test('close(): in-flight requests finish, new connections are refused, streams are told to stop', async (t) => {
  let streamStopped = false;
  const { url, server } = await startShell(t, {
    routes: [
      defineRoute({
        method: 'GET',
        path: '/work',
        auth: 'none',
        schemas: { response: { 200: z.object({ done: z.boolean() }) } },
        openapi: { summary: 'work' },
        handler: async () => {
          await new Promise((r) => setTimeout(r, 200));
          return reply.json({ done: true });
        },
      }),
      ndjsonRoute('/stream', async (sink, ctx) => {
        await sink.write('{"open":true}\n');
        await new Promise((resolve) => ctx.shutdownSignal.addEventListener('abort', resolve, { once: true }));
        await sink.write('{"end":"shutdown"}\n');
        streamStopped = true;
      }),
    ],
  });
  const stream = await fetch(`${url}/stream`);
  const work = fetch(`${url}/work`);
  await waitFor(() => server.inFlight === 2, 'the stream and the work to be in flight');
  const closing = server.close(2000);
  t.equal(server.draining, true);
  const res = await work;
  t.same(await res.json(), { done: true }, 'in-flight request completed during the drain');
  t.equal(await stream.text(), '{"open":true}\n{"end":"shutdown"}\n', 'stream got its last line and ended');
  t.ok(streamStopped);
  await closing;
  await t.rejects(fetch(`${url}/work`), 'no new connections after close');
});

t.test('close(): the deadline cuts work that does not finish', async (t) => {
  const { url, server } = await startShell(t, {
    routes: [
      defineRoute({
        method: 'GET',
        path: '/forever',
        auth: 'none',
        schemas: { response: { 200: z.object({}) } },
        openapi: { summary: 'forever' },
        handler: () => new Promise(() => undefined),
      }),
    ],
  });
  const pending = fetch(`${url}/forever`).catch((err: Error) => err);
  await waitFor(() => server.inFlight === 1, 'the request to arrive');
  const started = Date.now();
  await server.close(150);
  t.ok(Date.now() - started < 1000, 'close returned at the deadline');
  t.type(await pending, Error, 'the stuck request was cut');
});
