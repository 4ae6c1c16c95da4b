import t from 'tap';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routeTableDocument } from '../../src/app.js';
import {
  compareFingerprint,
  generateTypes,
  GENERATED_TYPES_FILE,
  operationsFingerprint,
  readCommittedFingerprint,
} from '../../sdk/contract/tooling.js';
import { startTestApp } from '../helpers/app.js';

const committed = readCommittedFingerprint();

t.test('the served document is valid OpenAPI 3.1, byte-identical at both paths', async (t) => {
  const { url, app } = await startTestApp(t);
  const a = await fetch(`${url}/api/v1/openapi.json`);
  const b = await fetch(`${url}/api/openapi`);
  t.equal(a.status, 200);
  t.equal(b.status, 200);
  t.match(a.headers.get('content-type'), /application\/json/);
  const bytesA = Buffer.from(await a.arrayBuffer());
  const bytesB = Buffer.from(await b.arrayBuffer());
  t.ok(bytesA.equals(bytesB), 'same bytes at /api/v1/openapi.json and /api/openapi');
  const doc = JSON.parse(bytesA.toString()) as Record<string, unknown>;
  t.equal(doc['openapi'], '3.1.0');
  t.same(doc, app.openapi, 'the served document is the one built from the route table');

  const validator = new Validator();
  const result = await validator.validate(doc);
  t.ok(result.valid, `validates against the OpenAPI 3.1 schema: ${JSON.stringify(result.errors ?? []).slice(0, 2000)}`);
  const paths = Object.keys(doc['paths'] as object);
  t.notOk(paths.includes('/api/v1/account/usage/summary'), 'dashboard-only routes are not in the v1 document');
  t.ok(
    paths.every((p) => p.startsWith('/api/v1/')),
    'only /api/v1 routes are documented',
  );

  // The SDK's checked-in types are what the live document generates (npm run sdk:generate rewrites them).
  const checkedIn = readFileSync(GENERATED_TYPES_FILE, 'utf8');
  const fresh = await generateTypes(doc);
  t.ok(checkedIn === fresh, 'sdk/src/generated/openapi.ts matches the served document (run npm run sdk:generate)');
  if (checkedIn !== fresh) {
    const a = checkedIn.split('\n');
    const b = fresh.split('\n');
    const line = a.findIndex((l, i) => l !== b[i]);
    t.comment(`first difference at line ${line + 1}:\n  checked in: ${a[line]}\n  generated:  ${b[line]}`);
  }
});

t.test(
  'the committed fingerprint (sdk/contract/operations.json) matches the route table (run npm run openapi:fingerprint on purpose)',
  async (t) => {
    const diff = compareFingerprint(committed, operationsFingerprint(routeTableDocument()));
    t.same(
      { added: diff.added, removed: diff.removed },
      { added: [], removed: [] },
      'no documented operation added, removed or renamed without updating the fingerprint',
    );
    t.ok(diff.ok);
  },
);

t.test('the fingerprint changes when a route is renamed', async (t) => {
  const doc = routeTableDocument();
  const paths = doc['paths'] as Record<string, unknown>;
  const [first] = Object.keys(paths);
  const renamed = { ...doc, paths: { ...paths, [`${first}-renamed`]: paths[first!] } };
  delete (renamed.paths as Record<string, unknown>)[first!];
  t.not(operationsFingerprint(renamed).sha256, operationsFingerprint(doc).sha256);
});

t.test('every route declares request and response schemas', async (t) => {
  const { app } = await startTestApp(t);
  for (const route of app.routes) {
    const name = `${route.method} ${route.path}`;
    t.ok(Object.keys(route.schemas.response).length > 0, `${name} declares its response schema`);
    if (route.path.includes(':')) t.ok(route.schemas.params, `${name} declares its path parameter schema`);
    if (['POST', 'PUT', 'PATCH'].includes(route.method)) t.ok(route.schemas.body, `${name} declares its body schema`);
    t.ok(route.openapi.summary.length > 0, `${name} has a summary`);
  }
});
