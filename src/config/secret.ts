import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * SECRET_KEY signs session cookies, control tokens and widget signatures. When it is unset, a key is
 * generated once and kept under DATA_DIR (mode 0600) so a single instance survives restarts. Every
 * instance of a fleet must share SECRET_KEY instead.
 */
export function resolveSecretKey(
  fromEnv: string | undefined,
  dataDir: string,
): { key: string; source: 'env' | 'generated' | 'file' } {
  if (fromEnv !== undefined) return { key: fromEnv, source: 'env' };
  const path = join(dataDir, 'secret.key');
  try {
    const existing = readFileSync(path, 'utf8').trim();
    if (Buffer.byteLength(existing) >= 32) return { key: existing, source: 'file' };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(48).toString('base64url');
  try {
    writeFileSync(path, key + '\n', { mode: 0o600, flag: 'wx' });
    return { key, source: 'generated' };
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      return { key: readFileSync(path, 'utf8').trim(), source: 'file' };
    throw err;
  }
}
