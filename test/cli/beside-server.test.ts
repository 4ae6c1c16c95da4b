/**
 * The operator CLI while `npm start` runs on the embedded database: the server holds PGlite (one process only), so
 * the CLI hands its command to the server through the operator socket, and the user, key and operator grant it makes
 * work at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { dashboardHeaders, IDENTITY_TEST_SECRET_KEY, login } from '../helpers/identity.js';
import { serverCommand } from '../helpers/server-command.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function run(
  args: string[],
  env: Record<string, string>,
  stdin = '',
): Promise<{ code: number | null; json: any; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...serverCommand('cli'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown = undefined;
      try {
        json = JSON.parse(stdout);
      } catch {
        // reported by the assertions
      }
      resolve({ code, json, stderr });
    });
    child.stdin.end(stdin);
  });
}

/** Starts `src/main.ts` on the embedded database; resolves its base URL once it listens. */
function startServer(t: Test, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, serverCommand('main'), {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(
      () =>
        new Promise<void>((done) => {
          if (child.exitCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
        }),
    );
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start in 90 s:\n${out}`)), 90_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.includes('"parley listening"'));
      if (line) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`, child });
      }
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => reject(new Error(`server exited (${code}):\n${out}`)));
  });
}

t.test('user:create and key:create work while the server runs on the embedded database', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-beside-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    DATA_DIR: dataDir,
    SECRET_KEY: IDENTITY_TEST_SECRET_KEY,
    LOG_LEVEL: 'info',
    PORT: '0',
    HOST: '127.0.0.1',
    // Not self-hosted: the first owner is not made an operator, so the grant below is what makes one.
    SELF_HOSTED: 'false',
  };
  const { url } = await startServer(t, env);
  t.equal(statSync(join(dataDir, 'operator.sock')).mode & 0o777, 0o600, 'only the server user may connect');

  let r = await run(['user:create', '--email', 'owner@example.test', '--password-stdin'], env, 'a long password\n');
  t.equal(r.code, 0, r.stderr);
  t.match(r.json, { userId: /^usr_/, accountId: /^acct_/ });
  t.match(r.stderr, /ran by the server that holds the embedded database/);

  r = await run(['key:create', '--email', 'owner@example.test', '--scopes', 'assistants:read,assistants:write'], env);
  t.equal(r.code, 0, r.stderr);
  const secret = r.json.secret as string;
  const res = await fetch(`${url}/api/v1/assistants`, { headers: { authorization: `Bearer ${secret}` } });
  t.equal(res.status, 200, 'the new key works on the running server at once');

  // An operator is made and unmade while the server runs: their session is admitted, then refused, with no restart.
  const cookie = await login(url, 'owner@example.test', 'a long password');
  const admin = () => fetch(`${url}/api/admin/accounts`, { headers: dashboardHeaders(url, cookie) });
  t.equal((await admin()).status, 403, 'not an operator yet');
  r = await run(['admin:grant', '--email', 'owner@example.test'], env);
  t.equal(r.code, 0, r.stderr);
  t.match(r.json, { operator: { email: 'owner@example.test', isAdmin: true, fromConfig: false } });
  t.equal((await admin()).status, 200, 'admitted on the next request');
  r = await run(['admin:revoke', '--email', 'owner@example.test'], env);
  t.equal(r.code, 0, r.stderr);
  t.equal((await admin()).status, 403, 'and refused again after the revocation');

  r = await run(['key:create', '--email', 'nobody@example.test', '--scopes', 'chat'], env);
  t.equal(r.code, 1);
  t.match(r.json, { code: 'AUTH_USER_NOT_FOUND' });
  r = await run(['user:create', '--email', 'owner@example.test', '--password', 'x'], env);
  t.equal(r.code, 2, 'bad arguments are still exit 2');
  r = await run(['migrate'], env);
  t.equal(r.code, 0);
  t.same(r.json, { ok: true, applied: [] }, 'the running server migrated at start');
});
