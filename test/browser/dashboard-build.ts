import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DASHBOARD_DIST = join(ROOT, 'web/dashboard/dist');

function newestMtime(path: string): number {
  let info;
  try {
    info = statSync(path);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/**
 * Builds web/dashboard (the same `npm run build:dashboard` that `npm start` runs) when there is no build or any
 * of its inputs (the app, its Vite config, the SDK it imports) is newer than the build: a fresh clone's
 * `npm test` works without a build step, and a test never runs against a stale bundle.
 */
export async function ensureDashboardBuilt(): Promise<string> {
  const built = newestMtime(join(DASHBOARD_DIST, 'index.html'));
  const inputs = [
    'web/dashboard/src',
    'web/dashboard/public',
    'web/dashboard/index.html',
    'web/dashboard/vite.config.ts',
    'sdk/src',
  ].map((p) => newestMtime(join(ROOT, p)));
  if (built === 0 || Math.max(...inputs) > built) {
    await run(
      process.execPath,
      [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'web/dashboard/vite.config.ts'],
      {
        cwd: ROOT,
        timeout: 120_000,
      },
    );
  }
  return DASHBOARD_DIST;
}
