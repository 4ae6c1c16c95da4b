import t from 'tap';
import { readFileSync } from 'node:fs';
import { routeTable } from '../../src/app.js';

/**
 * Every route outside the v1 document (dashboard, widget assets, admin, webhooks, health) is listed in the README's
 * "API" section, so what is not in the contract is still written down. A new hidden route fails here until it is.
 */
t.test('the README API section names every route that is not in the v1 document', async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = /\n## API\n([\s\S]*?)\n## /.exec(readme)?.[1];
  t.ok(section, 'the README has an API section');
  const rows = (section ?? '').split('\n').filter((line) => line.startsWith('| `'));
  for (const route of routeTable()) {
    if (route.path.startsWith('/api/v1/') && route.openapi.hidden !== true) continue;
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    // Rows may abbreviate siblings: `GET /api/v1/account/usage/summary`, `/limits`, ...
    const listed = rows.some((row) => {
      const cell = row.split('|')[1] ?? '';
      if (cell.includes(`${route.method} ${path}\``)) return true;
      const tail = path.slice(path.lastIndexOf('/'));
      return cell.includes(`\`${tail}\``) && cell.includes(`${route.method} ${path.slice(0, path.lastIndexOf('/'))}/`);
    });
    t.ok(listed, `${route.method} ${path} is in the README API section`);
  }
});
