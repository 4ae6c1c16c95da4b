import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];
let hooked = false;

/**
 * A fresh directory under the system's temp dir (a DATA_DIR, a recording's folder, a WAV), removed when this test
 * process exits: by then every app and child process that wrote into it has stopped, so nothing is removed from under
 * a writer, and a run leaves no directories behind.
 */
export function scratchDir(prefix: string): string {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const dir of made) rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
