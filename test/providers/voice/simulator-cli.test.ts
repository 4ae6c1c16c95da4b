import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createVoiceProvider } from '../../../src/providers/voice/index.js';
import { FAST_ADAPTER, Recorder, waitFor } from './helpers.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const main = join(root, 'src', 'providers', 'voice', 'simulator', 'main.ts');

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`standalone simulator prints its URL, serves sessions and stops cleanly on ${signal}`, async (t) => {
    const child = spawn(tsx, [main, '--port', '0', '--seed', '3'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    await waitFor(() => stdout.includes('\n'), 'the URL line', 20_000);
    const url = stdout.split('\n')[0]!;
    t.match(url, /^ws:\/\/127\.0\.0\.1:\d+\/v1\/live\/sessions$/);

    const rec = new Recorder();
    const session = await createVoiceProvider({ kind: 'simulator', url, ...FAST_ADAPTER }).startSession(
      {},
      { handlers: rec },
    );
    t.equal(session.state, 'connected');
    const exited = once(child, 'exit');
    child.kill(signal);
    const [code] = (await exited) as [number | null];
    t.equal(code, 0, 'exit code 0');
    await waitFor(() => rec.closed.length === 1, 'the hang-up');
    t.equal(rec.closed[0]!.reason, 'remote_hangup', 'live sessions are told the provider hung up');
    t.equal(rec.closed[0]!.usageFinal, true);
  });
}

t.test('standalone simulator rejects a bad --port', async (t) => {
  const child = spawn(tsx, [main, '--port', 'x'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 1);
});
