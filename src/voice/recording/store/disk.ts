import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SESSION_ID_PATTERN } from '../../session/session-id.js';
import type { RecordingStore, StoredRecording } from './types.js';

const WAV_SUFFIX = '.wav';

/**
 * Recordings as files: `<dir>/<sessionId>.wav`. Putting one is a rename, so a WAV that exists is always complete
 * (the local file is built on the same file system, under `<dir>/.parts/`).
 */
export class DiskRecordingStore implements RecordingStore {
  readonly kind = 'disk';

  constructor(readonly dir: string) {}

  pathOf(sessionId: string): string {
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new Error('not a voice session id');
    return join(this.dir, `${sessionId}${WAV_SUFFIX}`);
  }

  async put(sessionId: string, localPath: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await rename(localPath, this.pathOf(sessionId));
  }

  async open(sessionId: string): Promise<StoredRecording | null> {
    const path = this.pathOf(sessionId);
    const info = await stat(path).catch(() => undefined);
    if (info === undefined || !info.isFile()) return null;
    return {
      size: info.size,
      read: (start, end) => createReadStream(path, { start, end, highWaterMark: 64 * 1024 }),
    };
  }

  async remove(sessionId: string): Promise<boolean> {
    const path = this.pathOf(sessionId);
    const existed = await stat(path).then(
      () => true,
      () => false,
    );
    await rm(path, { force: true });
    return existed;
  }

  async list(): Promise<string[]> {
    return (await readdir(this.dir).catch(() => [] as string[]))
      .filter((name) => name.endsWith(WAV_SUFFIX) && SESSION_ID_PATTERN.test(name.slice(0, -WAV_SUFFIX.length)))
      .map((name) => name.slice(0, -WAV_SUFFIX.length));
  }

  async abortStaleUploads(): Promise<number> {
    return 0;
  }

  async check(): Promise<void> {}

  close(): void {}
}
