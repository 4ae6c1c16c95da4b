import t from 'tap';
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { sleep } from '../helpers/wait.js';
import { deleteKeysWithPrefix, uniquePrefix } from '../helpers/store.js';

/**
 * `npm run dev` on a copy of the repository (its own dist/ and web/dashboard/dist, so the suite's other tests never
 * see the edits made here): it serves the widget and the dashboard without a build step first, and a change to a
 * widget source, a dashboard source or the server reaches what it serves.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COPIED = ['src', 'scripts', 'web', 'sdk', 'package.json', 'tsconfig.json'];
const NOT_COPIED = new RegExp(`(^|\\${sep})(dist|node_modules|screenshots)(\\${sep}|$)`);

async function text(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

t.test(
  'npm run dev builds and serves the widget and dashboard, and serves each change after its rebuild',
  async (t) => {
    const copy = mkdtempSync(join(tmpdir(), 'parley-dev-'));
    for (const entry of COPIED)
      cpSync(join(ROOT, entry), join(copy, entry), {
        recursive: true,
        filter: (source) => !NOT_COPIED.test(source.slice(ROOT.length)),
      });
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(copy, 'node_modules'));
    const database = await createTestDatabase(t);
    const redisPrefix = uniquePrefix('dev');

    const child = spawn('npm', ['run', 'dev'], {
      cwd: copy,
      detached: true, // its own process group: npm, the dev script and the server stop together
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? tmpdir(),
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: redisPrefix,
        DATA_DIR: join(copy, '.data'),
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    t.teardown(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-child.pid!, 'SIGTERM');
        const killed = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
        await exited;
        clearTimeout(killed);
      }
      await deleteKeysWithPrefix(redisPrefix);
      rmSync(copy, { recursive: true, force: true });
    });

    /** The server's address from its latest `parley listening` line (every restart logs one, on a new port). */
    const listening = () =>
      output
        .split('\n')
        .filter((line) => line.includes('"parley listening"'))
        .map((line) => `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`);
    const base = () => listening().at(-1)!;
    /** Polls `check` every 100 ms until it holds; fails after `timeoutMs`, or at once when npm run dev exited. */
    const until = async (check: () => Promise<boolean>, what: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!(await check().catch(() => false))) {
        if (child.exitCode !== null) throw new Error(`npm run dev exited ${child.exitCode}\n${output}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${output}`);
        await sleep(100);
      }
    };

    await until(async () => listening().length > 0, 'the server to listen', 90_000);
    const first = await text(`${base()}/widget/v1/parley.js`);
    t.equal(first.status, 200, 'the widget is served at once: no npm run build:widget first');
    t.match(first.body, /parley-assistant/);
    await until(async () => (await text(`${base()}/dashboard`)).status === 200, 'the dashboard to be served', 90_000);
    t.match((await text(`${base()}/dashboard`)).body, /<title>Parley dashboard<\/title>/);

    // A widget source changes: the rebuilt script is served, by the same server.
    const marker = `parley-dev-${Date.now().toString(36)}`;
    const servers = listening().length;
    appendFileSync(join(copy, 'web/widget/src/main.ts'), `\nconsole.debug('${marker}');\n`);
    await until(
      async () => (await text(`${base()}/widget/v1/parley.js`)).body.includes(marker),
      'the changed widget to be served',
      60_000,
    );
    t.pass('the changed widget is served');
    t.equal(listening().length, servers, 'without restarting the server');

    // A dashboard source changes: rebuilt, and the restarted server serves it.
    const title = `Parley dashboard ${marker}`;
    const html = join(copy, 'web/dashboard/index.html');
    writeFileSync(
      html,
      readFileSync(html, 'utf8').replace('<title>Parley dashboard</title>', `<title>${title}</title>`),
    );
    await until(
      async () => (await text(`${base()}/dashboard`)).body.includes(title),
      'the changed dashboard to be served',
      90_000,
    );
    t.pass('the changed dashboard is served');

    // A server source changes: the server restarts on its own and answers.
    const before = listening().length;
    appendFileSync(join(copy, 'src/main.ts'), '\n// changed\n');
    await until(async () => listening().length > before, 'the server to restart', 60_000);
    t.equal((await fetch(`${base()}/healthz`)).status, 200, 'the restarted server answers');
  },
);
