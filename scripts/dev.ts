/**
 * `npm run dev`: the service as you work on it. Builds the widget (dist/widget) and the dashboard
 * (web/dashboard/dist), starts the server (src/main.ts under tsx, configured by the environment like `npm start`),
 * then keeps all three current:
 *
 * - a change under web/widget or sdk/src rebuilds the widget; the server serves the new file on the next request
 *   (it rereads a widget file whose modification time changed);
 * - a change under web/dashboard or sdk/src rebuilds the dashboard, then restarts the server (it holds the
 *   dashboard's files in memory);
 * - a change under src/ restarts the server.
 *
 * A build that fails is reported and the last good output stays served until the next change fixes it. The server's
 * own output goes to this terminal; this script's lines start with `dev:`. Ctrl-C (or SIGTERM) stops the watchers
 * and the server, which drains as in production.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as viteBuild } from 'vite';
import { buildWidget } from '../web/widget/build.js';
import { serialTask, watchPaths } from './dev-watch.js';
import { PARLEY_NODE_FLAGS } from './node-flags.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** How long a stopping server may drain before it is hurried (a second signal), then killed. */
const STOP_HURRY_MS = 3000;
const STOP_KILL_MS = 8000;

const say = (line: string) => process.stdout.write(`dev: ${line}\n`);
const failure = (what: string) => (err: unknown) =>
  process.stderr.write(`dev: ${what} failed: ${err instanceof Error ? err.message : String(err)}\n`);

async function timed(what: string, work: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  await work();
  say(`${what} in ${Date.now() - started} ms`);
}

const widget = serialTask(() => timed('widget built (dist/widget)', () => buildWidget()), failure('widget build'));

let dashboardBuilt = false;
const dashboard = serialTask(async () => {
  await timed('dashboard built (web/dashboard/dist)', () =>
    viteBuild({ configFile: join(root, 'web/dashboard/vite.config.ts'), logLevel: 'warn' }),
  );
  // The server reads the dashboard once: a rebuild after the first reaches it through a restart.
  if (dashboardBuilt) void server.run();
  dashboardBuilt = true;
}, failure('dashboard build'));

let child: ChildProcess | undefined;
let stopping = false;

function stopServer(): Promise<void> {
  const running = child;
  if (running === undefined || running.exitCode !== null || running.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hurry = setTimeout(() => running.kill('SIGTERM'), STOP_HURRY_MS);
    const kill = setTimeout(() => running.kill('SIGKILL'), STOP_KILL_MS);
    running.once('exit', () => {
      clearTimeout(hurry);
      clearTimeout(kill);
      resolve();
    });
    running.kill('SIGTERM');
  });
}

const server = serialTask(async () => {
  const restart = child !== undefined;
  await stopServer();
  if (stopping) return;
  if (restart) say('restarting the server');
  child = spawn(process.execPath, [...PARLEY_NODE_FLAGS, '--import', 'tsx', join(root, 'src/main.ts')], {
    cwd: root,
    stdio: 'inherit',
  });
  const started = child;
  started.once('exit', (code, signal) => {
    if (!stopping && child === started)
      say(`the server exited (${signal ?? `code ${code}`}); it starts again on the next change under src/`);
  });
}, failure('server start'));

async function main(): Promise<void> {
  // Widget first (the server serves it from the first request); the dashboard builds while the server starts.
  await widget.run();
  const firstDashboard = dashboard.run();
  await server.run();
  await firstDashboard;

  const closers = [
    watchPaths(root, [join(root, 'web/widget'), join(root, 'sdk/src')], (changed) => {
      say(`changed: ${changed.join(', ')}`);
      void widget.run();
    }),
    watchPaths(root, [join(root, 'web/dashboard'), join(root, 'sdk/src')], () => void dashboard.run()),
    watchPaths(root, [join(root, 'src')], (changed) => {
      say(`changed: ${changed.join(', ')}`);
      void server.run();
    }),
  ];
  say('watching web/widget, web/dashboard, sdk/src and src for changes');

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const close of closers) close();
    await Promise.all([widget.idle(), dashboard.idle()]);
    await stopServer();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

await main();
