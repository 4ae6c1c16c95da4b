import t from 'tap';
import { importGraph } from './import-graph.js';

// docs/house-rules.md rule 2: only the shell (src/http/) imports uWebSockets.js; capabilities see a RequestContext, a
// Reply value and a RealtimeSocket, so they can be tested and benchmarked without the server.
t.test('only src/http/ imports uWebSockets.js', async (t) => {
  const graph = importGraph('src');
  const importers = [...graph.packages]
    .filter(([, packages]) => packages.some((p) => p === 'uWebSockets.js' || p.startsWith('uWebSockets.js/')))
    .map(([file]) => file);
  t.ok(
    importers.some((file) => file.startsWith('http/')),
    'the shell itself is seen importing it (the scan works)',
  );
  t.same(
    importers.filter((file) => !file.startsWith('http/')),
    [],
    'files outside src/http/ that import uWebSockets.js',
  );
});
