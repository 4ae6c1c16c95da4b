import t from 'tap';
import { importGraph } from './import-graph.js';

// docs/house-rules.md rule 11: the browser and the server share only the contract. web/ names the SDK as the package
// @parley/sdk (never a relative path into sdk/src/), and neither web/ nor the SDK imports the server's modules.
const TREES = ['sdk/src', 'web/widget/src', 'web/dashboard/src'];

for (const tree of TREES) {
  t.test(`${tree}/ imports nothing outside itself by a relative path`, async (t) => {
    const graph = importGraph(tree);
    const outside = [...graph.edges].flatMap(([file, targets]) =>
      targets.filter((target) => target.startsWith('../')).map((target) => `${file} -> ${target}`),
    );
    t.same(outside, [], 'relative imports leaving the tree (import the SDK as @parley/sdk)');
  });
}

t.test('the browser apps use the SDK as @parley/sdk', async (t) => {
  for (const tree of ['web/widget/src', 'web/dashboard/src']) {
    const packages = [...importGraph(tree).packages.values()].flat();
    t.ok(
      packages.some((p) => p === '@parley/sdk' || p.startsWith('@parley/sdk/')),
      `${tree} imports @parley/sdk`,
    );
  }
});
