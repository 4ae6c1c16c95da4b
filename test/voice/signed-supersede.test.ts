import t from 'tap';
import { ownerWithVoice, post, startVoiceApp, voiceAssistant, ORIGIN } from './helpers.js';

/**
 * With signed visitors required, a caller who knows a visitor's id cannot mint a call as that visitor, so it cannot
 * supersede (end) that visitor's live call; the visitor's own reload still supersedes its older call.
 */
t.test("a known visitor id cannot mint a call that supersedes the visitor's live call", async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { settings: { requireWidgetSigning: true } });
  const sign = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    post(app.url, '/api/v1/widget/sign', { assistantId: assistant.publicId, ...body }, { origin: ORIGIN, ...headers });
  const mint = (visitorId: string, signature?: string) =>
    post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'], visitorId },
      { origin: ORIGIN, ...(signature ? { 'x-parley-signature': signature } : {}) },
    );

  const victim = await sign({});
  t.equal(victim.status, 200);
  const call = await mint(victim.body.visitorId, victim.body.signature);
  t.equal(call.status, 200, `the signed visitor calls (${JSON.stringify(call.body)})`);

  t.equal((await sign({ visitorId: victim.body.visitorId })).status, 403, "no signature for the victim's id");
  const unsigned = await mint(victim.body.visitorId);
  t.equal(unsigned.status, 403, 'an unsigned mint as the victim is refused');
  const attacker = await sign({});
  const borrowed = await mint(victim.body.visitorId, attacker.body.signature);
  t.equal(borrowed.status, 403, "the attacker's own signature does not cover the victim's id");
  t.equal(app.app.voice.sessions.get(call.body.sessionId)?.status, 'active', "the victim's call goes on");

  const reload = await mint(victim.body.visitorId, victim.body.signature);
  t.equal(reload.status, 200, "the victim's own reload is admitted");
  const older = await post(
    app.url,
    `/api/v1/voice/sessions/${call.body.sessionId}/end`,
    { visitorId: victim.body.visitorId },
    { origin: ORIGIN },
  );
  t.match(older.body, { status: 'ended', endReason: 'superseded' });
  await post(
    app.url,
    `/api/v1/voice/sessions/${reload.body.sessionId}/end`,
    { visitorId: victim.body.visitorId },
    { origin: ORIGIN },
  );
});
