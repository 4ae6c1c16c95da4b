import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PARLEY_NODE_FLAGS } from '../../scripts/node-flags.js';

const root = join(import.meta.dirname, '..', '..');

t.test('npm start and the Dockerfile run Parley with the Node flags in scripts/node-flags.ts', async (t) => {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts['start']!;
  const startNode = start.slice(start.lastIndexOf('node '));
  const cmd = /^CMD \[(.*)\]$/m.exec(readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8'))?.[1] ?? '';
  t.ok(PARLEY_NODE_FLAGS.length > 0);
  for (const flag of PARLEY_NODE_FLAGS) {
    t.match(
      startNode,
      new RegExp(`^node (\\S+ )*${flag}( \\S+)* dist/main\\.js$`),
      `npm start passes ${flag} before the script`,
    );
    t.match(
      cmd,
      new RegExp(`^"node", ("[^"]+", )*"${flag}", ("[^"]+", )*"dist/main\\.js"$`),
      `the Dockerfile's CMD passes ${flag} before the script`,
    );
  }
});
