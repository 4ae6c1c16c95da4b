import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('./fixtures/cork-server.ts', import.meta.url));

t.test('every write after an await is corked: uWS prints no corking warning', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (c: Buffer) => resolve(Number(c.toString().trim())));
    child.once('exit', (code) => reject(new Error(`fixture exited ${code}: ${stderr}`)));
  });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  t.same(await (await fetch(`${base}/json`)).json(), { ok: true });
  t.same(
    await (
      await fetch(`${base}/body`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    ).json(),
    { a: 1 },
  );
  t.equal((await fetch(`${base}/fail`)).status, 500);
  t.equal(await (await fetch(`${base}/stream`)).text(), '{"i":0}\n{"i":1}\n{"i":2}\n');
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  t.equal(await exited, 0);
  t.notMatch(stderr, /corked callback/, 'no uncorked write warning');
});
