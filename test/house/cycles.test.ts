import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { findCycles, importGraph } from './import-graph.js';

// docs/house-rules.md rule 1: imports point downward. A circle means two parts stand on each other; move the shared
// piece to the level both stand on (e.g. src/audit beside db, a provider's types in their own file, a parameter).
/** Every source tree the rule covers: the server, the SDK and each browser app. */
const TREES = ['src', 'sdk/src', 'web/widget/src', 'web/dashboard/src'];

t.test('src/ has no import circle (type-only imports included)', async (t) => {
  const graph = importGraph('src');
  t.ok(graph.files.length > 100, `read the whole tree (${graph.files.length} files)`);
  t.ok(graph.edges.get('app.ts')!.includes('voice/index.ts'), 'relative .js specifiers resolve to the .ts files');
  const cycles = findCycles(graph.edges);
  t.same(
    cycles.map((c) => c.join(' -> ')),
    [],
    'import circles in src/ (each shown as one loop)',
  );
});

for (const tree of TREES.slice(1)) {
  t.test(`${tree}/ has no import circle (type-only imports included)`, async (t) => {
    const graph = importGraph(tree);
    t.ok(graph.files.length > 5, `read the tree (${graph.files.length} files)`);
    t.ok(
      [...graph.edges.values()].some((targets) => targets.length > 0),
      'relative imports resolve to files (.ts and .tsx)',
    );
    t.same(
      findCycles(graph.edges).map((c) => c.join(' -> ')),
      [],
      `import circles in ${tree}/ (each shown as one loop)`,
    );
  });
}

t.test('the check sees a circle when there is one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-house-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'a'));
  writeFileSync(join(dir, 'a', 'index.ts'), "export { b } from './b.js';\n");
  writeFileSync(join(dir, 'a', 'b.ts'), "import type { C } from '../c.js';\nexport const b = (c: C) => c;\n");
  writeFileSync(join(dir, 'c.ts'), "import { b } from './a/index.js';\nexport type C = typeof b;\n");
  writeFileSync(join(dir, 'd.ts'), "import { b } from './a';\nexport const d = b;\n");
  t.same(
    findCycles(importGraph(dir).edges),
    [['a/b.ts', 'c.ts', 'a/index.ts', 'a/b.ts']],
    'a type-only circle through an index is found',
  );
  t.same(findCycles(new Map([['x', ['x']]])), [['x', 'x']], 'a file importing itself is a circle');
  t.same(
    findCycles(
      new Map([
        ['x', ['y']],
        ['y', []],
      ]),
    ),
    [],
    'a line is not a circle',
  );
});
