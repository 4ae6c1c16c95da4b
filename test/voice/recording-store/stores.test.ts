import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import t from 'tap';
import { DiskRecordingStore, S3RecordingStore } from '../../../src/voice/recording/store/index.js';
import { scratchDir } from '../../helpers/scratch.js';
import { recordingStoreContract } from './contract.js';
import { deadEndpoint, s3Options, startS3rver } from './s3rver.js';

/** Both recording stores pass one contract; the bucket store against a real S3-compatible server (s3rver). */

recordingStoreContract(t, 'disk', async () => new DiskRecordingStore(scratchDir('parley-recordings-')));

recordingStoreContract(t, 's3', async (t) => {
  const server = await startS3rver(t);
  const store = new S3RecordingStore(s3Options(server));
  t.teardown(() => store.close());
  return store;
});

t.test('s3: a refused upload keeps the local WAV; the next attempt stores it', async (t) => {
  const server = await startS3rver(t);
  const store = new S3RecordingStore(s3Options(server, 'not-yet'));
  t.teardown(() => store.close());
  const local = join(scratchDir('parley-store-'), 'vs_retry.wav');
  writeFileSync(local, randomBytes(64 * 1024));
  await t.rejects(store.put('vs_retry', local), 'the bucket does not exist yet');
  t.ok(existsSync(local), 'nothing lost: the WAV is still on disk');

  const admin = new S3Client({ ...s3Options(server), forcePathStyle: true });
  t.teardown(() => admin.destroy());
  await admin.send(new CreateBucketCommand({ Bucket: 'not-yet' }));
  await store.put('vs_retry', local);
  t.notOk(existsSync(local), 'stored, then deleted locally');
  t.equal((await store.open('vs_retry'))?.size, 64 * 1024);
});

t.test('s3: a bucket that is down is a bounded 503, and /readyz-style checks fail', async (t) => {
  const store = new S3RecordingStore({ ...s3Options({ endpoint: await deadEndpoint(), bucket: 'recordings' }) });
  t.teardown(() => store.close());
  await t.rejects(store.open('vs_down'), { code: 'DEPENDENCY_UNAVAILABLE', status: 503 });
  await t.rejects(store.check(AbortSignal.timeout(1000)), 'the readiness check fails');
});
