import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import t from 'tap';
import { scratchDir } from '../../helpers/scratch.js';
import { cli, oneJsonLine } from '../../cli/run-cli.js';
import { s3Env } from '../recording-store/recorded-call.js';
import { deadEndpoint, s3Options, startS3rver } from '../recording-store/s3rver.js';

/**
 * `npm run cli -- recordings:migrate` against a real S3-compatible server (s3rver): recordings a disk store left in
 * DATA_DIR/recordings go into the bucket byte for byte and leave the disk; a second run has nothing to do; one already
 * in the bucket (a run stopped midway) is only deleted from disk; a bucket that is down loses nothing.
 */

t.test('recordings:migrate moves disk recordings into the bucket, idempotently', async (t) => {
  const server = await startS3rver(t);
  const admin = new S3Client(s3Options(server));
  t.teardown(() => admin.destroy());
  const dataDir = scratchDir('parley-migrate-');
  const dir = join(dataDir, 'recordings');
  mkdirSync(dir, { recursive: true });
  const one = randomBytes(6 * 1024 * 1024); // two multipart parts
  const two = randomBytes(1000);
  writeFileSync(join(dir, 'vs_migrateone.wav'), one);
  writeFileSync(join(dir, 'vs_migratetwo.wav'), two);
  writeFileSync(join(dir, 'notes.txt'), 'not a recording');
  // Already uploaded by an earlier run that stopped before deleting it.
  await admin.send(new PutObjectCommand({ Bucket: server.bucket, Key: 'calls/vs_migratetwo.wav', Body: two }));
  const env = { ...s3Env(server.endpoint, server.bucket), DATA_DIR: dataDir };

  const first = await cli(['recordings:migrate'], env);
  t.equal(first.code, 0, first.stderr);
  oneJsonLine(t, first);
  t.same(first.json, { ok: true, moved: 1, alreadyStored: 1, failed: 0, bytes: one.length });
  const got = await admin.send(new GetObjectCommand({ Bucket: server.bucket, Key: 'calls/vs_migrateone.wav' }));
  t.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(one), 'in the bucket byte for byte');
  t.notOk(existsSync(join(dir, 'vs_migrateone.wav')), 'moved: gone from disk');
  t.notOk(existsSync(join(dir, 'vs_migratetwo.wav')), 'already stored: gone from disk');
  t.ok(existsSync(join(dir, 'notes.txt')), 'other files are left alone');

  const again = await cli(['recordings:migrate'], env);
  t.equal(again.code, 0);
  t.same(again.json, { ok: true, moved: 0, alreadyStored: 0, failed: 0, bytes: 0 }, 'a second run has nothing to do');
});

t.test('recordings:migrate with the bucket down keeps every recording on disk; without s3 it refuses', async (t) => {
  const dataDir = scratchDir('parley-migrate-');
  const dir = join(dataDir, 'recordings');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'vs_migratedown.wav'), randomBytes(2000));
  const down = await cli(['recordings:migrate'], { ...s3Env(await deadEndpoint(), 'recordings'), DATA_DIR: dataDir });
  t.equal(down.code, 1);
  t.match(down.json, { ok: false, moved: 0, failed: 1 });
  t.ok(existsSync(join(dir, 'vs_migratedown.wav')), 'nothing lost');

  const disk = await cli(['recordings:migrate'], { DATA_DIR: dataDir });
  t.equal(disk.code, 2);
  t.match(disk.json, { code: 'RECORDINGS_STORE_NOT_S3' });
});
