import { hostname } from 'node:os';
import { readFile, rm, writeFile } from 'node:fs/promises';

/**
 * Lock files this process holds. Not an I/O client: it only lets a restarted container whose new process
 * got the same pid as the crashed one (pid 1 in Docker) tell its own live lock from a stale one.
 */
const heldHere = new Set<string>();

interface LockOwner {
  pid: number;
  host: string;
}

/**
 * Takes an exclusive lock file for an embedded data directory. PGlite has no postmaster.pid of its own,
 * and two processes writing one data directory corrupt it (two instances sharing a volume without
 * DATABASE_URL, or the migrate CLI run beside the service). Returns the release function.
 */
export async function lockDataDir(path: string, what: string): Promise<() => Promise<void>> {
  const me: LockOwner = { pid: process.pid, host: hostname() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(path, JSON.stringify(me), { flag: 'wx' });
      heldHere.add(path);
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        heldHere.delete(path);
        await rm(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await readOwner(path);
    if (owner && isLive(owner, me, path)) {
      throw new Error(
        `${what} is in use by process ${owner.pid} on ${owner.host} (lock file ${path}). ` +
          'Only one process may open it: stop the other one, or set DATABASE_URL to share a real PostgreSQL. ' +
          'If no other process uses it, delete the lock file.',
      );
    }
    // Stale (its process is gone) or unreadable (crash mid-write): take it over.
    await rm(path, { force: true });
  }
  throw new Error(`Could not take the lock file ${path}`);
}

async function readOwner(path: string): Promise<LockOwner | null> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<LockOwner>;
    if (typeof parsed.pid === 'number' && typeof parsed.host === 'string')
      return { pid: parsed.pid, host: parsed.host };
  } catch {
    // Missing or half-written: treated as stale.
  }
  return null;
}

function isLive(owner: LockOwner, me: LockOwner, path: string): boolean {
  // Another host sharing the directory cannot be probed; assume it is alive (the safe answer).
  if (owner.host !== me.host) return true;
  if (owner.pid === me.pid) return heldHere.has(path);
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
