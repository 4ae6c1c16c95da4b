import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { IDENTITY_TEST_SECRET_KEY } from '../helpers/identity.js';
import { serverCommand } from '../helpers/server-command.js';
import { scratchDir } from '../helpers/scratch.js';

/** The operator CLI run as `npm run cli --` runs it, for the CLI test files (one spawn per command). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed: the CLI promises exactly one JSON object there. */
  json: Record<string, unknown>;
}

/** Runs the CLI (src/cli.ts, what `npm run cli --` runs, or its build) with a clean environment. */
export function cli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...serverCommand('cli'), ...args], {
      cwd: ROOT,
      env: {
        DATA_DIR: scratchDir('parley-cli-'),
        SECRET_KEY: IDENTITY_TEST_SECRET_KEY,
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stdout.split('\n').filter((l) => l.length > 0);
      let json: Record<string, unknown> = {};
      try {
        if (lines.length === 1) json = JSON.parse(lines[0]!) as Record<string, unknown>;
      } catch {
        // left empty: the assertions below report it
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.end(stdin ?? '');
  });
}

export function oneJsonLine(t: Test, result: CliResult): void {
  t.equal(result.stdout.trim().split('\n').length, 1, 'exactly one line on stdout');
  t.doesNotThrow(() => JSON.parse(result.stdout), 'and it is JSON');
}
