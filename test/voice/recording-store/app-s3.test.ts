import { existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import t from 'tap';
import { readWavHeader } from '../../../src/voice/index.js';
import { bearer, dashboardHeaders, login } from '../../helpers/identity.js';
import { startVoiceApp, waitFor } from '../helpers.js';
import { recordedCall, s3Env } from './recorded-call.js';
import { deadEndpoint, s3Options, startS3rver } from './s3rver.js';

/**
 * RECORDINGS_STORE=s3 through the whole app against a real S3-compatible server: a recorded call lands as one object
 * (the local WAV deleted once uploaded), plays through the dashboard route and a signed link with Range, /readyz
 * checks the bucket, deleting the conversation deletes the object; a bucket that is down keeps the WAV on disk and
 * answers playback with a bounded 503.
 */

t.test('a recorded call is stored in the bucket and plays from it', async (t) => {
  const server = await startS3rver(t);
  const app = await startVoiceApp(t, { env: s3Env(server.endpoint, server.bucket) });
  const { owner, assistant, minted } = await recordedCall(app);
  const admin = new S3Client(s3Options(server));
  t.teardown(() => admin.destroy());
  const keys = async () =>
    ((await admin.send(new ListObjectsV2Command({ Bucket: server.bucket }))).Contents ?? []).map((o) => o.Key);
  await waitFor(
    async () => ((await keys()).includes(`calls/${minted.sessionId}.wav`) ? true : undefined),
    'the object',
  );
  await app.app.voice.recordings!.settled();
  const recordings = app.app.voice.recordings!;
  t.same(recordings.counts, { streamed: 1, built: 0 }, 'streamed to the bucket during the call, not built at its end');
  t.notOk(existsSync(join(recordings.dir, '.parts', `${minted.sessionId}.wav`)), 'the local WAV is gone once uploaded');
  t.notOk(existsSync(recordings.pathOf(minted.sessionId)), 'and none under DATA_DIR/recordings');

  const ready = await fetch(`${app.url}/readyz`);
  t.equal(ready.status, 200);
  t.match(await ready.json(), { checks: { database: 'ok', store: 'ok', recordings: 'ok' } });

  const cookie = await login(app.url, owner.email, owner.password);
  const path = `/api/assistants/${assistant.publicId}/voice/recordings/${minted.sessionId}`;
  const full = await fetch(`${app.url}${path}`, { headers: dashboardHeaders(app.url, cookie) });
  t.equal(full.status, 200);
  const wav = Buffer.from(await full.arrayBuffer());
  t.match(readWavHeader(wav), { channels: 2 });
  t.equal(Number(full.headers.get('content-length')), wav.length);
  const part = await fetch(`${app.url}${path}`, {
    headers: { ...dashboardHeaders(app.url, cookie), range: 'bytes=44-99' },
  });
  t.equal(part.status, 206);
  t.same(Buffer.from(await part.arrayBuffer()), wav.subarray(44, 100), 'Range from the bucket');

  const link = (await (
    await fetch(`${app.url}/api/v1/conversations/${minted.conversationId}/recordings/${minted.sessionId}/url`, {
      headers: bearer(owner.secret),
    })
  ).json()) as { url: string };
  const u = new URL(link.url);
  const signed = await fetch(`${app.url}${u.pathname}${u.search}`, { headers: { range: 'bytes=0-43' } });
  t.equal(signed.status, 206, 'the signed link plays from the bucket');

  const deleted = await fetch(`${app.url}/api/v1/conversations/${minted.conversationId}`, {
    method: 'DELETE',
    headers: bearer(owner.secret),
  });
  t.equal(deleted.status, 200);
  t.notOk((await keys()).includes(`calls/${minted.sessionId}.wav`), 'deleting the conversation deleted the object');
});

t.test('a bucket that is down: the WAV stays on disk, playback is a bounded 503, /readyz says so', async (t) => {
  const app = await startVoiceApp(t, {
    env: s3Env(await deadEndpoint(), 'recordings'),
    // startVoiceApp passes voice options through to the capability, media knobs included.
    voice: { media: { recordingRetryMs: [20] } } as never,
  });
  const { owner, assistant, minted } = await recordedCall(app);
  const recordings = app.app.voice.recordings!;
  const kept = join(recordings.dir, '.parts', `${minted.sessionId}.wav`);
  await waitFor(() => (!recordings.isWriting(minted.sessionId) ? true : undefined), 'the upload attempts');
  t.ok(existsSync(kept), 'nothing lost: the finished WAV waits on disk for the next attempt');
  t.same(recordings.counts, { streamed: 0, built: 1 }, 'the stream gave up; the WAV was built from the tracks');

  const ready = await fetch(`${app.url}/readyz`);
  t.equal(ready.status, 503, 'not ready: the bucket does not answer');
  await ready.arrayBuffer();

  const cookie = await login(app.url, owner.email, owner.password);
  const res = await fetch(`${app.url}/api/assistants/${assistant.publicId}/voice/recordings/${minted.sessionId}`, {
    headers: dashboardHeaders(app.url, cookie),
  });
  t.equal(res.status, 503);
  t.ok(res.headers.get('retry-after'), 'Retry-After');
  t.match(await res.json(), { code: 'DEPENDENCY_UNAVAILABLE' });

  const detail = await fetch(`${app.url}/api/v1/conversations/${minted.conversationId}`, {
    headers: bearer(owner.secret),
  });
  t.equal(detail.status, 200, 'the conversation still opens while the bucket is down');
  t.match(await detail.json(), { recordings: [{ sessionId: minted.sessionId }] });
});

t.test('the sweep stores a WAV the bucket refused earlier and deletes objects of deleted conversations', async (t) => {
  const server = await startS3rver(t);
  const app = await startVoiceApp(t, {
    env: s3Env(server.endpoint, 'later'),
    voice: { media: { recordingRetryMs: [20] } } as never,
  });
  const { minted } = await recordedCall(app);
  const recordings = app.app.voice.recordings!;
  const kept = join(recordings.dir, '.parts', `${minted.sessionId}.wav`);
  await waitFor(() => (!recordings.isWriting(minted.sessionId) ? true : undefined), 'the upload attempts');
  t.ok(existsSync(kept), 'refused (no such bucket yet): kept on disk');

  const admin = new S3Client(s3Options(server, 'later'));
  t.teardown(() => admin.destroy());
  await admin.send(new CreateBucketCommand({ Bucket: 'later' }));
  await admin.send(new PutObjectCommand({ Bucket: 'later', Key: 'calls/vs_orphan0001.wav', Body: 'RIFF' }));
  // The sweep leaves files younger than a minute to a writer that may still hold them.
  const past = new Date(Date.now() - 120_000);
  utimesSync(kept, past, past);
  await recordings.sweep();
  const keys = ((await admin.send(new ListObjectsV2Command({ Bucket: 'later' }))).Contents ?? []).map((o) => o.Key);
  t.same(keys, [`calls/${minted.sessionId}.wav`], "stored by the sweep; the deleted conversation's object removed");
  t.notOk(existsSync(kept), 'and then deleted locally');
});
