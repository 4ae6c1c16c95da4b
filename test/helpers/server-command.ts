import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Node's arguments that start Parley's `main` (the server) or `cli` (the operator CLI) as a process of its own: the
 * built module in dist/ when tap built it for this run (test/helpers/build-before.ts), else src through tsx. Both are
 * the same source: dist is src transpiled by esbuild, as `npm start` runs it.
 */
export function serverCommand(entry: 'main' | 'cli'): string[] {
  const built = `${ROOT}dist/${entry}.js`;
  if (process.env.PARLEY_TEST_BUILT === '1' && existsSync(built)) return [built];
  return ['--import', 'tsx', `${ROOT}src/${entry}.ts`];
}
