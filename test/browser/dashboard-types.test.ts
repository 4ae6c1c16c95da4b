/** The dashboard's generated route types match the server's route table (run `npm run dashboard:generate` when not). */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { generateTypes } from '../../sdk/contract/tooling.js';
import { routeTableDocument } from '../../src/app.js';
import { SCOPES } from '../../src/auth/principal.js';
import { scopes } from '../../web/dashboard/src/api/generated/dashboard-routes.js';
import { DASHBOARD_TYPES_FILE, dashboardDocument, dashboardTypes } from './dashboard-types.js';

t.test('web/dashboard/src/api/generated/dashboard-routes.ts is current', async (t) => {
  t.equal(readFileSync(DASHBOARD_TYPES_FILE, 'utf8'), await dashboardTypes(), 'stale: run npm run dashboard:generate');
});

t.test('the dashboard document has the routes the dashboard calls and nothing of the v1 contract', async (t) => {
  const paths = Object.keys(dashboardDocument()['paths'] as Record<string, unknown>);
  for (const p of [
    '/api/auth/login',
    '/api/account/keys',
    '/api/assistants/{assistantId}/uploads',
    '/api/v1/account/usage/summary',
    '/api/admin/audit',
  ]) {
    t.ok(paths.includes(p), `${p} is typed`);
  }
  t.notOk(
    paths.some((p) => p === '/api/v1/assistants' || p === '/api/v1/chat'),
    'v1 routes come from the SDK, not from here',
  );
  t.notOk(
    paths.some((p) => p.startsWith('/dashboard')),
    'the static app itself is not an API',
  );
});

t.test('each type is generated once: what the v1 types name, the dashboard types refer to', async (t) => {
  const text = readFileSync(DASHBOARD_TYPES_FILE, 'utf8');
  t.match(text, "import type { components as v1 } from '@parley/sdk/openapi';");
  t.match(text, 'document: v1["schemas"]["Document"];', "the Document record is the SDK's");
  t.match(text, '503: v1["responses"]["ErrorRetryAfter"]', "error answers are the SDK's");
  const own = /^export interface components \{\n([\s\S]*?)^\}/m.exec(text)?.[1] ?? '';
  const v1Schemas = Object.keys((routeTableDocument()['components'] as Record<string, unknown>)['schemas'] as object);
  for (const name of v1Schemas) t.notMatch(own, new RegExp(`^ {8}${name}: `, 'm'), `${name} is not emitted again`);
});

t.test(
  "the generator reuses only identical components; one of the same name but another shape stays the dashboard's",
  async (t) => {
    const doc = (thing: Record<string, unknown>) => ({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/x': {
          get: {
            operationId: 'x',
            responses: {
              200: {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
              },
            },
          },
        },
      },
      components: { schemas: { Thing: thing } },
    });
    const v1 = doc({ type: 'object', properties: { a: { type: 'string' } } });
    const same = await generateTypes(doc({ type: 'object', properties: { a: { type: 'string' } } }), {
      reuse: { document: v1, from: './v1.js' },
    });
    t.match(same, '"application/json": v1["schemas"]["Thing"]');
    const other = await generateTypes(doc({ type: 'object', properties: { b: { type: 'number' } } }), {
      reuse: { document: v1, from: './v1.js' },
    });
    t.match(other, '"application/json": components["schemas"]["Thing"]');
    t.match(other, 'b?: number;');
    t.notMatch(other, 'import type', 'nothing reused, nothing imported');
  },
);

t.test("the Keys page offers exactly the server's scopes, in its order (generated, not copied)", async (t) => {
  t.same([...scopes], [...SCOPES]);
});
