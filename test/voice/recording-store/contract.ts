import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { RecordingStore } from '../../../src/voice/recording/store/index.js';
import { scratchDir } from '../../helpers/scratch.js';

/**
 * What every RecordingStore does (docs/house-rules.md rule 7), run against each implementation: a put takes the local
 * WAV (gone once stored), open gives its size and any byte range, list and remove see it, a missing one is null.
 */
export function recordingStoreContract(t: Test, name: string, make: (t: Test) => Promise<RecordingStore>): void {
  t.test(`${name}: put, open with ranges, list, remove`, async (t) => {
    const store = await make(t);
    const dir = scratchDir('parley-store-');
    // 12 MiB: more than two 5 MiB multipart parts.
    const body = randomBytes(12 * 1024 * 1024);
    const local = join(dir, 'vs_contract1.wav');
    writeFileSync(local, body);
    const id = `vs_contract${randomBytes(4).toString('hex')}`;

    t.equal(await store.open(id), null, 'nothing before the put');
    await store.put(id, local);
    t.notOk(existsSync(local), 'the local file is gone once stored');

    const opened = await store.open(id);
    t.equal(opened?.size, body.length, 'its whole size');
    const read = async (start: number, end: number) => {
      const chunks: Buffer[] = [];
      for await (const chunk of opened!.read(start, end)) chunks.push(Buffer.from(chunk));
      return Buffer.concat(chunks);
    };
    t.same(await read(0, 43), body.subarray(0, 44), 'the first bytes');
    const at = 5 * 1024 * 1024 - 10; // across the first part's end
    t.same(await read(at, at + 99), body.subarray(at, at + 100), 'a range across a part boundary');
    t.ok((await read(0, body.length - 1)).equals(body), 'the whole recording, byte for byte');

    t.ok((await store.list()).includes(id), 'listed');
    t.equal(await store.remove(id), true, 'removed: it was there');
    t.equal(await store.open(id), null, 'gone');
    t.notOk((await store.list()).includes(id), 'no longer listed');
    t.equal(await store.remove(id), false, 'removing again: nothing was there');
  });
}
