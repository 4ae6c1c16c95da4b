import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServer } from '../../scripts/build-server.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_SECRET_KEY } from '../helpers/app.js';
import { scratchDir } from '../helpers/scratch.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `npm start` and the image run the esbuild output (`npm run build:server`), not src through tsx. This builds it
 * into a scratch dist/ inside the repository (so node_modules resolves as from ./dist) and runs it as a process
 * against a real Postgres: migrations copied and found, native and wasm packages loading, a clean SIGTERM.
 */
t.test('the built server (dist/main.js) starts, migrates a fresh database, answers and drains', async (t) => {
  mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  const scratch = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'parley-build-test-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const outDir = join(scratch, 'dist');
  // Leftovers of an older build: a module since deleted from src must go; the widget build's output must stay.
  mkdirSync(join(outDir, 'gone'), { recursive: true });
  writeFileSync(join(outDir, 'gone', 'old.js'), 'throw new Error("stale")');
  mkdirSync(join(outDir, 'widget'), { recursive: true });
  writeFileSync(join(outDir, 'widget', 'parley.js'), '/* widget */');

  const modules = await buildServer(outDir);
  t.ok(modules > 50, `transpiled every server module (${modules})`);
  t.ok(existsSync(join(outDir, 'main.js')) && existsSync(join(outDir, 'main.js.map')), 'main.js with its source map');
  t.ok(
    readdirSync(join(outDir, 'db', 'migrations')).some((f) => f.endsWith('.sql')),
    'migrations copied',
  );
  t.notOk(existsSync(join(outDir, 'gone')), 'a stale module from an older build is removed');
  t.ok(existsSync(join(outDir, 'widget', 'parley.js')), 'the widget build output is kept');

  const db = await createTestDatabase(t, { migrate: false });
  const child = spawn(process.execPath, [join(outDir, 'main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATA_DIR: scratchDir('parley-built-'),
      DATABASE_URL: db.url,
      SECRET_KEY: TEST_SECRET_KEY,
      PORT: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const line = output.split('\n').find((l) => l.includes('"parley listening"'));
      if (line !== undefined) {
        clearInterval(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    }, 25);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`dist/main.js exited ${code} before listening\n${output}`));
    });
  });

  const base = `http://127.0.0.1:${port}`;
  const ready = await fetch(`${base}/readyz`);
  t.equal(ready.status, 200, 'ready on the migrated database');
  const [row] = await db.sql<Array<{ n: number }>>`select count(*)::int as n from schema_migrations`;
  t.equal(
    row?.n,
    readdirSync(join(ROOT, 'src', 'db', 'migrations')).filter((f) => f.endsWith('.sql')).length,
    'every migration applied',
  );
  const openapi = await fetch(`${base}/api/v1/openapi.json`);
  t.equal(openapi.status, 200);
  t.match((await openapi.json()) as object, { openapi: String, paths: Object });

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exit 0 after SIGTERM');
  t.match(output, /"stopped"/);
});
