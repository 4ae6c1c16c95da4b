import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import t from 'tap';
import { bearer } from '../../helpers/identity.js';
import { startVoiceApp } from '../helpers.js';
import { recordedCall, s3Env } from '../recording-store/recorded-call.js';
import { s3Options, startS3rver } from '../recording-store/s3rver.js';

/**
 * The life of stored recordings against a real S3-compatible server (s3rver), through the app: an assistant's
 * retention deletes older recordings by the sweep (and the conversation no longer lists or links them); deleting a
 * visitor deletes their recordings at once; a deleted assistant's objects go at the next sweep;
 * a server that cannot list multipart uploads does not stop the sweep. One app for the file.
 */

t.test('retention, visitor and assistant deletion remove the objects', async (t) => {
  const server = await startS3rver(t);
  const app = await startVoiceApp(t, { env: s3Env(server.endpoint, server.bucket) });
  const recordings = app.app.voice.recordings!;
  const admin = new S3Client(s3Options(server));
  t.teardown(() => admin.destroy());
  const keys = async () =>
    ((await admin.send(new ListObjectsV2Command({ Bucket: server.bucket }))).Contents ?? []).map((o) => o.Key!);
  const key = (sessionId: string) => `calls/${sessionId}.wav`;
  const sql = app.database.sql;

  await t.test('retention per assistant', async (t) => {
    const old = await recordedCall(app, { voice: { recordingRetentionDays: 2 }, stored: true });
    const recent = await recordedCall(app, { owner: old.owner, assistant: old.assistant, stored: true });
    const keeper = await recordedCall(app, { owner: old.owner, stored: true }); // no retention set
    await sql`update voice_sessions set ended_at = now() - interval '3 days'
      where id in ${sql([old.minted.sessionId, keeper.minted.sessionId])}`;
    t.ok((await keys()).includes(key(old.minted.sessionId)), 'stored before the sweep');

    await recordings.sweep();
    const after = await keys();
    t.notOk(after.includes(key(old.minted.sessionId)), 'the call older than 2 days: its object is deleted');
    t.ok(after.includes(key(recent.minted.sessionId)), 'the recent call of the same assistant stays');
    t.ok(after.includes(key(keeper.minted.sessionId)), 'an assistant without retention keeps its old recordings');

    const detail = await fetch(`${app.url}/api/v1/conversations/${old.minted.conversationId}`, {
      headers: bearer(old.owner.secret),
    });
    t.match(await detail.json(), { recordings: [] }, 'the conversation no longer lists it');
    const link = await fetch(
      `${app.url}/api/v1/conversations/${old.minted.conversationId}/recordings/${old.minted.sessionId}/url`,
      { headers: bearer(old.owner.secret) },
    );
    t.equal(link.status, 404, 'no link to an expired recording');
    await link.arrayBuffer();
    const [row] = await sql<{ recordingExpiredAt: Date | null }[]>`
      select recording_expired_at from voice_sessions where id = ${old.minted.sessionId}`;
    t.ok(row?.recordingExpiredAt, 'the call is marked: the next sweep does not ask for it again');

    const patched = await fetch(`${app.url}/api/v1/assistants/${old.assistant.publicId}`, {
      method: 'PATCH',
      headers: { ...bearer(old.owner.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ settings: { voice: { recordingRetentionDays: 0 } } }),
    });
    t.equal(patched.status, 400, 'a retention under one day is refused');
    t.match(await patched.json(), { code: 'VALIDATION_FAILED', error: /recordingRetentionDays/ });
  });

  await t.test("deleting a visitor deletes their recordings' objects at once", async (t) => {
    const call = await recordedCall(app, { extra: { visitorId: 'visitor-erase-1' }, stored: true });
    t.ok((await keys()).includes(key(call.minted.sessionId)));
    const res = await fetch(`${app.url}/api/v1/visitors/visitor-erase-1`, {
      method: 'DELETE',
      headers: bearer(call.owner.secret),
    });
    t.equal(res.status, 200);
    t.match(await res.json(), { deleted: { recordings: 1 } });
    t.notOk((await keys()).includes(key(call.minted.sessionId)), 'the object is gone without waiting for a sweep');
  });

  await t.test('a deleted assistant loses its objects at the next sweep', async (t) => {
    // Parley has no account deletion; an assistant's is the deletion that takes calls with it.
    const call = await recordedCall(app, { stored: true });
    const res = await fetch(`${app.url}/api/v1/assistants/${call.assistant.publicId}`, {
      method: 'DELETE',
      headers: bearer(call.owner.secret),
    });
    t.equal(res.status, 200);
    await res.arrayBuffer();
    t.ok((await keys()).includes(key(call.minted.sessionId)), 'still there until the sweep');
    await recordings.sweep();
    t.notOk((await keys()).includes(key(call.minted.sessionId)), 'swept: no session of that assistant remains');
  });

  await t.test('a server that cannot list multipart uploads does not stop the sweep', async (t) => {
    // s3rver answers ListMultipartUploads with 501 NotImplemented.
    t.equal(await recordings.abortStaleUploads(), 0);
    await t.resolves(recordings.sweep());
  });
});
