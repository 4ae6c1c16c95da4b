import t from 'tap';
import { z } from 'zod';
import { openApiSecurity, routeTable, v1Document } from '../../src/app.js';
import { buildOpenApiDocument, defineRoute, reply, type AnyRoute } from '../../src/http/index.js';
import { compareFingerprint, operationsFingerprint, readCommittedFingerprint } from '../../sdk/contract/tooling.js';
import { createParleyClient, type DeprecationNotice } from '../../sdk/src/index.js';
import { startShell } from '../helpers/shell.js';

/** The versioning rules, enforced (docs/api.md, Versioning and deprecation: deprecation headers, the fingerprint). */

const oldRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/old-things',
    auth: 'none',
    cors: true,
    schemas: {
      query: z.object({
        sort: z
          .enum(['asc', 'desc'])
          .optional()
          .meta({ deprecated: true })
          .describe('Ignored; results are always newest first.'),
      }),
      response: {
        200: z.object({ things: z.array(z.string()), legacyTotal: z.number().int().meta({ deprecated: true }) }),
      },
    },
    openapi: {
      summary: 'Old things',
      description: 'Replaced by /api/v1/things.',
      tags: ['Meta'],
      dependencyFree: true,
      deprecated: { since: '2026-01-15', sunset: '2026-07-01', link: 'https://docs.example/migrate-things' },
    },
    handler: (ctx) => {
      if (ctx.query.sort === 'asc')
        return reply.json({ error: 'no', code: 'VALIDATION_FAILED', requestId: ctx.requestId }, 400);
      return reply.json({ things: ['a'], legacyTotal: 1 });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/dated-only',
    auth: 'none',
    schemas: { response: { 200: z.object({ ok: z.literal(true) }) } },
    openapi: {
      summary: 'Deprecated without a sunset yet',
      tags: ['Meta'],
      dependencyFree: true,
      deprecated: { since: '2026-03-01T00:00:00Z' },
    },
    handler: () => reply.json({ ok: true }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/things',
    auth: 'none',
    schemas: { response: { 200: z.object({ things: z.array(z.string()) }) } },
    openapi: { summary: 'Things', tags: ['Meta'], dependencyFree: true },
    handler: () => reply.json({ things: ['a'] }),
  }),
];

const documentOf = (routes: AnyRoute[]) =>
  buildOpenApiDocument(routes, { title: 't', version: '1.0.0', include: () => true, ...openApiSecurity }) as {
    paths: Record<string, Record<string, any>>;
    components: Record<string, any>;
  };

t.test(
  'a deprecated route: marked in OpenAPI, answered with Deprecation, Sunset and Link; the SDK tells the caller',
  async (t) => {
    const doc = documentOf(oldRoutes);
    const old = doc.paths['/api/v1/old-things']!['get'];
    t.equal(old.deprecated, true, 'the operation is deprecated in the document');
    t.match(old.description, /Deprecated since 2026-01-15; may be removed after 2026-07-01/);
    t.match(old.responses['200'].headers, {
      Deprecation: { $ref: '#/components/headers/Deprecation' },
      Sunset: { $ref: '#/components/headers/Sunset' },
    });
    t.equal(old.parameters[0].deprecated, true, 'a deprecated query field is marked');
    t.equal(
      old.responses['200'].content['application/json'].schema.properties.legacyTotal.deprecated,
      true,
      'a deprecated response field is marked',
    );
    t.notOk(doc.paths['/api/v1/things']!['get'].deprecated, 'other routes are not');
    t.ok(doc.components['headers'].Deprecation && doc.components['headers'].Sunset);

    const { url } = await startShell(t, { routes: oldRoutes });
    const res = await fetch(`${url}/api/v1/old-things`, { headers: { origin: 'https://app.example' } });
    t.equal(res.status, 200);
    t.equal(
      res.headers.get('deprecation'),
      `@${Date.parse('2026-01-15') / 1000}`,
      'Deprecation: @<unix seconds> (RFC 9745)',
    );
    t.equal(res.headers.get('sunset'), 'Wed, 01 Jul 2026 00:00:00 GMT', 'Sunset: an HTTP-date (RFC 8594)');
    t.equal(res.headers.get('link'), '<https://docs.example/migrate-things>; rel="deprecation"; type="text/html"');
    t.match(res.headers.get('access-control-expose-headers'), /deprecation, sunset, link/, 'browsers may read them');
    const refused = await fetch(`${url}/api/v1/old-things?sort=asc`);
    t.equal(refused.status, 400);
    t.ok(refused.headers.get('deprecation'), 'error answers of a deprecated route carry it too');
    const datedOnly = await fetch(`${url}/api/v1/dated-only`);
    t.ok(datedOnly.headers.get('deprecation'));
    t.equal(datedOnly.headers.get('sunset'), null, 'no Sunset until a date is set');
    const current = await fetch(`${url}/api/v1/things`);
    t.equal(current.headers.get('deprecation'), null, 'a route that is not deprecated says nothing');

    const notices: DeprecationNotice[] = [];
    const client = createParleyClient({ baseUrl: url, onDeprecation: (n) => notices.push(n) });
    await client.GET('/api/v1/old-things' as never, {} as never);
    await client.GET('/api/v1/things' as never, {} as never);
    t.equal(notices.length, 1, 'the SDK reported the deprecated call only');
    t.match(notices[0], {
      method: 'GET',
      path: '/api/v1/old-things',
      deprecatedAt: new Date('2026-01-15T00:00:00Z'),
      sunset: new Date('2026-07-01T00:00:00Z'),
      link: 'https://docs.example/migrate-things',
    });
  },
);

t.test(
  'a sunset less than 90 days after the deprecation, or a date that is not one, is refused when the table is built',
  async (t) => {
    const route = (deprecated: { since: string; sunset?: string }) => [
      { ...oldRoutes[2]!, openapi: { ...oldRoutes[2]!.openapi, deprecated } },
    ];
    t.throws(() => documentOf(route({ since: '2026-01-01', sunset: '2026-02-01' })), /less than 90 days/);
    t.throws(() => documentOf(route({ since: 'soon' })), /not a date/);
    t.doesNotThrow(() => documentOf(route({ since: '2026-01-01', sunset: '2026-04-01' })));
  },
);

t.test(
  'removing or renaming a v1 operation fails the fingerprint check until sdk/contract/operations.json is updated',
  async (t) => {
    const committed = readCommittedFingerprint();
    const routes = routeTable();
    t.ok(
      compareFingerprint(committed, operationsFingerprint(v1Document(routes))).ok,
      'today the route table matches the fingerprint',
    );

    const removed = routes.filter(
      (r) => !(r.method === 'POST' && r.path === '/api/v1/voice/sessions/:sessionId/heartbeat'),
    );
    const afterRemoval = compareFingerprint(committed, operationsFingerprint(v1Document(removed)));
    t.notOk(afterRemoval.ok, 'a removed operation fails');
    t.same(afterRemoval.removed, ['POST /api/v1/voice/sessions/{sessionId}/heartbeat']);

    const renamed = routes.map((r) => (r.path === '/api/v1/chat' ? { ...r, path: '/api/v1/chats' } : r));
    const afterRename = compareFingerprint(committed, operationsFingerprint(v1Document(renamed)));
    t.notOk(afterRename.ok, 'a renamed operation fails');
    t.same(
      { added: afterRename.added, removed: afterRename.removed },
      { added: ['POST /api/v1/chats'], removed: ['POST /api/v1/chat'] },
    );

    const remethod = routes.map((r) =>
      r.path === '/api/v1/assistants/:assistantId' && r.method === 'PATCH' ? { ...r, method: 'PUT' as const } : r,
    );
    t.notOk(compareFingerprint(committed, operationsFingerprint(v1Document(remethod))).ok, 'a changed method fails');

    const hidden = routes.map((r) =>
      r.path === '/api/v1/feedback' ? { ...r, openapi: { ...r.openapi, hidden: true } } : r,
    );
    t.notOk(
      compareFingerprint(committed, operationsFingerprint(v1Document(hidden))).ok,
      'an operation dropped from the document fails',
    );

    // Non-breaking evolution keeps the fingerprint: deprecating a route, documenting it better.
    const deprecated = routes.map((r) =>
      r.path === '/api/v1/feedback'
        ? {
            ...r,
            openapi: {
              ...r.openapi,
              description: 'Better words.',
              deprecated: { since: '2026-01-01', sunset: '2026-06-01' },
            },
          }
        : r,
    );
    t.ok(
      compareFingerprint(committed, operationsFingerprint(v1Document(deprecated))).ok,
      'deprecating or documenting does not',
    );

    // An intentional update (what `npm run openapi:fingerprint` writes) makes the check pass again.
    t.ok(compareFingerprint(operationsFingerprint(v1Document(renamed)), operationsFingerprint(v1Document(renamed))).ok);
  },
);
