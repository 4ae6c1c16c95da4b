import t from 'tap';
import { z } from 'zod';
import { defineRoute, reply, type RequestContext } from '../../src/http/index.js';
import { ndjsonRoute, startShell } from '../helpers/shell.js';

/**
 * The router reads headers and the client address from uWS lazily (GET /healthz never reads them). docs/house-rules.md
 * rule 14 must still hold: what a handler reads after an await (or a stream producer, later still) is the request's own
 * copy, and a context kept past a synchronous answer cannot read freed uWS memory.
 */
t.test(
  'headers and address: the same before and after awaits, in streams, and never read after a sync answer',
  async (t) => {
    let kept: RequestContext | undefined;
    const echo = z.object({ sync: z.string(), late: z.string(), ip: z.string(), cookie: z.string() });
    const { url } = await startShell(t, {
      routes: [
        defineRoute({
          method: 'GET',
          path: '/late',
          auth: 'none',
          schemas: { response: { 200: echo } },
          openapi: { summary: 'headers after awaits' },
          handler: async (ctx) => {
            const sync = ctx.headers['x-probe'] ?? '';
            await new Promise((resolve) => setTimeout(resolve, 20));
            return reply.json({
              sync,
              late: ctx.headers['x-probe'] ?? '',
              ip: ctx.ip,
              cookie: ctx.headers['cookie'] ?? '',
            });
          },
        }),
        ndjsonRoute('/stream', async (sink, ctx) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          await sink.write(`${JSON.stringify({ probe: ctx.headers['x-probe'] })}\n`);
        }),
        defineRoute({
          method: 'GET',
          path: '/sync',
          auth: 'none',
          schemas: { response: { 200: z.object({ ok: z.boolean() }) } },
          openapi: { summary: 'sync answer' },
          handler: (ctx) => {
            kept = ctx;
            return reply.json({ ok: true });
          },
        }),
      ],
    });
    const headers = { 'x-probe': 'value-1', cookie: 'a=1' };
    const late = (await (await fetch(`${url}/late`, { headers })).json()) as z.infer<typeof echo>;
    t.equal(late.sync, 'value-1');
    t.equal(late.late, 'value-1', 'still readable after an await');
    t.equal(late.cookie, 'a=1');
    t.match(
      late.ip,
      /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1|0000:0000:0000:0000:0000:ffff:7f00:0001)$/,
      `the client address (${late.ip})`,
    );

    const streamed = await (await fetch(`${url}/stream`, { headers })).text();
    t.same(JSON.parse(streamed.trim()), { probe: 'value-1' }, 'a stream producer reads the copy');

    const res = await fetch(`${url}/sync`, { headers });
    t.equal(res.status, 200);
    await res.arrayBuffer();
    t.throws(
      () => kept!.headers,
      /after the uWS handler returned/,
      'a context kept past a synchronous answer refuses instead of reading freed memory',
    );
  },
);
