/** The dashboard's generated route types match the server's route table (run `npm run dashboard:generate` when not). */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { DASHBOARD_TYPES_FILE, dashboardDocument, dashboardTypes } from './dashboard-types.js';

t.test('web/dashboard/src/api/generated/dashboard-routes.ts is current', async (t) => {
  t.equal(readFileSync(DASHBOARD_TYPES_FILE, 'utf8'), await dashboardTypes(), 'stale: run npm run dashboard:generate');
});

t.test('the dashboard document has the routes the dashboard calls and nothing of the v1 contract', async (t) => {
  const paths = Object.keys(dashboardDocument()['paths'] as Record<string, unknown>);
  for (const p of ['/api/auth/login', '/api/account/keys', '/api/assistants/{assistantId}/uploads', '/api/v1/account/usage/summary', '/api/admin/audit']) {
    t.ok(paths.includes(p), `${p} is typed`);
  }
  t.notOk(paths.some((p) => p === '/api/v1/assistants' || p === '/api/v1/chat'), 'v1 routes come from the SDK, not from here');
  t.notOk(paths.some((p) => p.startsWith('/dashboard')), 'the static app itself is not an API');
});
