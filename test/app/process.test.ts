import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverCommand } from '../helpers/server-command.js';
import { scratchDir } from '../helpers/scratch.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Runs Parley (src/main.ts, or its build) as its own process with only the given environment (no DATABASE_URL, no
 * REDIS_URL).
 */
function startProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, serverCommand('main'), {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<{ port: number; startupMs: number }>((resolve, reject) => {
    const timer = setInterval(() => {
      const line = stdout.split('\n').find((l) => l.includes('"parley listening"'));
      if (line) {
        clearInterval(timer);
        const parsed = JSON.parse(line) as { port: number; startupMs: number };
        resolve(parsed);
      }
    }, 25);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`exited ${code}\n${stdout}\n${stderr}`));
    });
  });
  return { child, listening, exited, output: () => stdout + stderr };
}

t.test('a fresh start on the embedded defaults answers health and OpenAPI, and drains on SIGTERM', async (t) => {
  const dataDir = scratchDir('parley-proc-');
  const started = Date.now();
  const proc = startProcess({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' });
  t.teardown(() => void proc.child.kill('SIGKILL'));
  const { port } = await proc.listening;
  t.comment(`started on the embedded defaults in ${Date.now() - started} ms (including tsx compile)`);
  const base = `http://127.0.0.1:${port}`;
  t.equal((await fetch(`${base}/healthz`)).status, 200);
  const ready = await fetch(`${base}/readyz`);
  t.equal(ready.status, 200, 'embedded database and memory store answer');
  // Not a terminal: the start-up hint is a log line whose fields give the dashboard and the first-owner command.
  await waitFor(() => proc.output().includes('create the first owner'), 'the start-up hint', 10_000);
  const hint = JSON.parse(
    proc
      .output()
      .split('\n')
      .find((l) => l.includes('create the first owner'))!,
  ) as Record<string, unknown>;
  t.match(
    hint,
    {
      dashboard: `http://127.0.0.1:${port}/dashboard/`,
      createOwner: /npm run cli -- user:create --email .+ --password-stdin/,
      firstOwnerIsOperator: true,
    },
    'the start-up hint names the dashboard and the command that makes the first owner',
  );
  const a = Buffer.from(await (await fetch(`${base}/api/v1/openapi.json`)).arrayBuffer());
  const b = Buffer.from(await (await fetch(`${base}/api/openapi`)).arrayBuffer());
  t.ok(a.length > 0 && a.equals(b), 'both OpenAPI paths serve the same bytes');

  proc.child.kill('SIGTERM');
  t.equal(await proc.exited, 0, 'exit 0 after SIGTERM');
  t.match(proc.output(), /"draining"/);
  t.match(proc.output(), /"stopped"/);
  const secret = readFileSync(join(dataDir, 'secret.key'), 'utf8').trim();
  t.ok(secret.length >= 32, 'a signing secret was generated under DATA_DIR');
  t.notOk(proc.output().includes(secret), 'the generated secret is not in the logs');

  // A restart on the same DATA_DIR keeps the data and the generated secret.
  const again = startProcess({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' });
  t.teardown(() => void again.child.kill('SIGKILL'));
  const second = await again.listening;
  t.equal((await fetch(`http://127.0.0.1:${second.port}/readyz`)).status, 200, 'restart on the same data works');
  again.child.kill('SIGTERM');
  t.equal(await again.exited, 0);
});

t.test('a bad configuration stops boot with every problem listed', async (t) => {
  const proc = startProcess({
    DATA_DIR: scratchDir('parley-proc-'),
    PORT: 'x',
    HOSTED_USAGE_ENFORCEMENT: 'always',
  });
  t.teardown(() => void proc.child.kill('SIGKILL'));
  proc.listening.catch(() => undefined); // it must never listen
  const code = await proc.exited;
  t.equal(code, 78, 'EX_CONFIG exit code');
  t.match(proc.output(), /PORT: must be a whole number/);
  t.match(proc.output(), /HOSTED_USAGE_ENFORCEMENT/);
});
