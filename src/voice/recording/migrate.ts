import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../log/index.js';
import { SESSION_ID_PATTERN } from '../session/session-id.js';
import type { RecordingStore } from './store/index.js';

const WAV_SUFFIX = '.wav';

/** What `recordings:migrate` did: counts only (no session ids on the terminal's log). */
export interface MigrationReport {
  /** Uploaded now, then deleted from disk. */
  moved: number;
  /** Already in the bucket at the same size (an earlier run stopped before deleting it): deleted from disk. */
  alreadyStored: number;
  /** Not uploaded (the bucket refused): left on disk for the next run. */
  failed: number;
  /** Bytes uploaded now. */
  bytes: number;
}

/**
 * Moves the recordings a disk store left in `dir` (`<sessionId>.wav`) into `store` (the bucket). Idempotent: a WAV
 * the bucket already holds at the same size is only deleted from disk, one it refused stays for the next run, and a
 * second run finds nothing to do. A WAV is deleted from disk only once the bucket has it (a run killed midway loses
 * nothing; the next run uploads it again).
 */
export async function migrateDiskRecordings(dir: string, store: RecordingStore, log: Logger): Promise<MigrationReport> {
  const report: MigrationReport = { moved: 0, alreadyStored: 0, failed: 0, bytes: 0 };
  const names = (await readdir(dir).catch(() => [] as string[])).filter(
    (name) => name.endsWith(WAV_SUFFIX) && SESSION_ID_PATTERN.test(name.slice(0, -WAV_SUFFIX.length)),
  );
  for (const name of names) {
    const id = name.slice(0, -WAV_SUFFIX.length);
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (info === undefined || !info.isFile()) continue;
    try {
      const stored = await store.open(id);
      if (stored !== null && stored.size === info.size) {
        await rm(path, { force: true });
        report.alreadyStored++;
        continue;
      }
      await store.put(id, path);
      report.moved++;
      report.bytes += info.size;
    } catch (err) {
      log.warn({ err }, 'a recording could not be moved to the bucket; it stays on disk');
      report.failed++;
    }
  }
  log.info({ ...report }, 'recordings migrated');
  return report;
}
