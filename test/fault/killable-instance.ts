import { spawn } from 'node:child_process';
import type { Test } from 'tap';
import { serverCommand } from '../helpers/server-command.js';
import { waitFor } from '../voice/helpers.js';

/**
 * An instance of the deployment as its own process (so it can be killed -9), on the provider simulator like every
 * test instance (the default would pick the local voice when it is installed). Killed at teardown.
 */
export async function startKillableInstance(
  t: Test,
  env: Record<string, string>,
): Promise<{ url: string; kill: () => Promise<void> }> {
  const child = spawn(process.execPath, serverCommand('main'), {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VOICE_PROVIDER: 'simulator', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async () => {
    child.kill('SIGKILL');
    await exited;
  };
  t.teardown(kill);
  const port = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`instance exited: ${output}`);
      const line = output.split('\n').find((l) => l.includes('"parley listening"'));
      return line ? (JSON.parse(line) as { port: number }).port : undefined;
    },
    'the instance to listen',
    60_000,
  );
  return { url: `http://127.0.0.1:${port}`, kill };
}
