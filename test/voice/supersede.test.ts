import t from 'tap';
import type { Test } from 'tap';
import { mintAsWidget, ownerWithVoice, post, startVoiceApp, voiceAssistant, ORIGIN } from './helpers.js';

/**
 * A reload supersedes the visitor's older widget call instead of being refused: the older call is ended
 * `superseded` and its concurrency slot released before the new call is admitted, so a visitor on a plan with one
 * concurrent call who reloads the page gets a call. Another visitor is still refused while the slot is taken.
 */
async function reloadSupersedes(t: Test, env: Record<string, string>) {
  const app = await startVoiceApp(t, { env });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const first = await mintAsWidget(app, assistant);
  t.equal(first.status, 200, 'the first call starts');
  const reload = await mintAsWidget(app, assistant);
  t.equal(reload.status, 200, `the same visitor's new call is admitted (${reload.body.code ?? '200'})`);
  t.not(reload.body.sessionId, first.body.sessionId);
  const older = await post(
    app.url,
    `/api/v1/voice/sessions/${first.body.sessionId}/end`,
    { visitorId: 'visitor-0001' },
    { origin: ORIGIN },
  );
  t.equal(older.status, 200);
  t.match(older.body, { status: 'ended', endReason: 'superseded' }, 'the older call was ended as superseded');
  const stranger = await mintAsWidget(app, assistant, { visitorId: 'visitor-0002' });
  t.equal(stranger.status, 403, 'another visitor is still refused: the one slot is held by the new call');
  t.match(stranger.body, { reason: 'voice_unavailable' });
  const end = await post(
    app.url,
    `/api/v1/voice/sessions/${reload.body.sessionId}/end`,
    { visitorId: 'visitor-0001' },
    { origin: ORIGIN },
  );
  t.match(end.body, { endReason: null });
}

t.test('enforce mode, a plan with one concurrent call: a reload supersedes', (t) =>
  reloadSupersedes(t, { HOSTED_USAGE_ENFORCEMENT: 'enforce' }),
);

t.test('the per-instance cap of one call: a reload supersedes', (t) =>
  reloadSupersedes(t, { HOSTED_USAGE_ENFORCEMENT: 'shadow', VOICE_MAX_CONCURRENT_SESSIONS: '1' }),
);

t.test(
  'the older call runs on another instance: the reload waits for its owner to end it, then is admitted',
  async (t) => {
    const env = { HOSTED_USAGE_ENFORCEMENT: 'enforce' };
    const voice = { ownership: { renewEveryMs: 250, ttlMs: 3000 } };
    const a = await startVoiceApp(t, { env, voice });
    const b = await startVoiceApp(t, { env, voice, database: a.database, redisPrefix: a.redisPrefix });
    const owner = await ownerWithVoice(a);
    const assistant = await voiceAssistant(a, owner);
    const first = await mintAsWidget(a, assistant);
    t.equal(first.status, 200, 'the first call starts on A');
    const reload = await mintAsWidget(b, assistant);
    t.equal(reload.status, 200, `the reload on B is admitted (${reload.body.code ?? '200'})`);
    const older = await post(
      a.url,
      `/api/v1/voice/sessions/${first.body.sessionId}/end`,
      { visitorId: 'visitor-0001' },
      { origin: ORIGIN },
    );
    t.match(older.body, { status: 'ended', endReason: 'superseded' }, 'A ended the older call as superseded');
    await post(
      b.url,
      `/api/v1/voice/sessions/${reload.body.sessionId}/end`,
      { visitorId: 'visitor-0001' },
      { origin: ORIGIN },
    );
  },
);
