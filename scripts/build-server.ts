/**
 * Builds the server (src/) into dist/ with esbuild: each .ts file transpiled on its own to an ES module at the same
 * relative place (dist/main.js, dist/db/migrate.js, ...), so the paths modules compute from `import.meta.url`
 * (migrations, the dashboard, the widget) hold in dist as in src. Nothing is bundled: packages in node_modules
 * (uWebSockets.js's native addon, PGlite's wasm, pino's worker transports) load from node_modules as in development.
 * The SQL migrations are copied to dist/db/migrations.
 *
 * Transpiling does not typecheck: `npm run typecheck` (part of `npm test`) does. This is what makes `npm start`
 * fast on a fresh clone. `npm run build:server` runs this; `npm run build` runs it with the web builds.
 */
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_SRC_DIR = join(root, 'src');
export const SERVER_OUT_DIR = join(root, 'dist');

/**
 * Transpiles src/ into `outDir` (default dist/) and copies the migrations. Returns the number of modules written.
 * dist/widget (the widget build's output) is left alone; stale server modules are removed first.
 */
export async function buildServer(outDir = SERVER_OUT_DIR): Promise<number> {
  const entryPoints = readdirSync(SERVER_SRC_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(SERVER_SRC_DIR, f));
  mkdirSync(outDir, { recursive: true });
  // Remove what a previous server build left (a module deleted from src must not linger), but not dist/widget.
  for (const name of readdirSync(outDir))
    if (name !== 'widget') rmSync(join(outDir, name), { recursive: true, force: true });
  await build({
    entryPoints,
    outdir: outDir,
    outbase: SERVER_SRC_DIR,
    bundle: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  });
  cpSync(join(SERVER_SRC_DIR, 'db', 'migrations'), join(outDir, 'db', 'migrations'), { recursive: true });
  return entryPoints.length;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const modules = await buildServer();
  console.log(`dist/: ${modules} server modules in ${Date.now() - started} ms`);
}
