import { spawn, type ChildProcess } from 'node:child_process';

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a TypeScript entry point as a user would (a child `node --import tsx` process), collecting its output.
 * `watch` sees the child and its stderr so far on every chunk (to send a signal at the right moment). Killed after
 * `timeoutMs`, so a hung child cannot hang the test.
 */
export function runScript(
  file: string,
  args: string[],
  options: {
    env?: Record<string, string>;
    timeoutMs?: number;
    watch?: (child: ChildProcess, stderr: string) => void;
  } = {},
): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      options.watch?.(child, stderr);
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}
