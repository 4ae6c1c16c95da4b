import t from 'tap';
import type { VoiceQuota } from '../../src/voice/index.js';
import { bearer, createOwner } from '../helpers/identity.js';
import {
  endWithKey,
  heartbeat,
  heartbeatUntil,
  live,
  mintWithKey,
  ownerWithVoice,
  post,
  speak,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from './helpers.js';

/** The voice transition table (docs/voice-protocol.md, end reasons), row by row, against the real provider simulator. */

t.test(
  'active session, heartbeat received, provider fine: healthy; client end: endReason null, final for 5 minutes',
  async (t) => {
    const app = await startVoiceApp(t);
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    const minted = await mintWithKey(app, owner, assistant);
    t.match(minted, {
      sessionId: /^vs_/,
      conversationId: /^conv_/,
      stream: {
        url: new RegExp(`^ws://.+/api/v1/voice/sessions/${minted.sessionId}/stream\\?token=`),
        protocol: 'parley.voice.v1',
      },
      audio: { format: 'pcm16', sampleRateHz: 24000, channels: 1 },
      recording: { enabled: false, consented: false },
      controlToken: String,
      heartbeatIntervalMs: 5000,
      playbackGate: true,
    });
    t.same((await heartbeat(app, minted)).body, { status: 'healthy', nextHeartbeatMs: 5000 });
    const [row] = await app.database
      .sql`select state, source, capabilities, owner_instance from voice_sessions where id = ${minted.sessionId}`;
    t.match(row, {
      state: 'active',
      source: 'api',
      capabilities: ['heartbeat', 'playback_gate'],
      ownerInstance: app.config.instanceId,
    });

    const end = await endWithKey(app, owner, minted.sessionId);
    t.equal(end.status, 200);
    t.match(end.body, { sessionId: minted.sessionId, status: 'ended', endReason: null, usageFinalized: true });
    t.type(end.body.billableSeconds, 'number');
    t.same(
      (await endWithKey(app, owner, minted.sessionId)).body,
      end.body,
      'ending again answers the same final result',
    );
    app.clock.advance(2000);
    t.same((await heartbeat(app, minted)).body, { status: 'ended', nextHeartbeatMs: 5000, endReason: null });
    const [ended] = await app.database
      .sql`select state, end_reason, ended_by, usage_finalized from voice_sessions where id = ${minted.sessionId}`;
    t.match(ended, { state: 'ended', endReason: null, endedBy: 'client', usageFinalized: true });
    const other = await createOwner(app.database.sql);
    t.equal((await endWithKey(app, other, minted.sessionId)).status, 404, 'another account cannot read or end it');
  },
);

t.test(
  'heartbeats stop for 45 s (heartbeat declared): ended heartbeat_lost; without heartbeat: not supervised',
  async (t) => {
    const app = await startVoiceApp(t);
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    const minted = await mintWithKey(app, owner, assistant);
    const unsupervised = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
    t.notOk('heartbeatIntervalMs' in unsupervised, 'no heartbeatIntervalMs without the heartbeat capability');
    t.ok(unsupervised.controlToken, 'the gate still needs a control token');

    app.clock.advance(30_000);
    t.equal((await heartbeat(app, minted)).body.status, 'healthy', 'a heartbeat at 30 s resets the deadline');
    app.clock.advance(44_000);
    t.equal((await heartbeat(app, minted)).body.status, 'healthy', '44 s after the last heartbeat it still lives');
    app.clock.advance(45_000);
    const after = await waitFor(async () => {
      const res = await heartbeat(app, minted);
      return res.body.status === 'ended' ? res.body : undefined;
    }, 'heartbeat_lost');
    t.same(after, { status: 'ended', nextHeartbeatMs: 5000, endReason: 'heartbeat_lost' });
    const end = await endWithKey(app, owner, minted.sessionId);
    t.match(end.body, { status: 'ended', endReason: 'heartbeat_lost' }, 'the end route answers the service-side end');
    t.ok(app.app.voice.sessions.has(unsupervised.sessionId), 'a session without heartbeat is not ended for silence');
    t.equal((await heartbeat(app, unsupervised)).body.status, 'healthy');
  },
);

t.test('heartbeat rate, wrong token, unknown session', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const minted = await mintWithKey(app, owner, await voiceAssistant(app, owner));
  t.equal((await heartbeat(app, minted)).status, 200);
  const fast = await heartbeat(app, minted);
  t.equal(fast.status, 429, 'two heartbeats within a second');
  t.equal(fast.headers.get('retry-after'), '1');
  app.clock.advance(1000);
  t.equal((await heartbeat(app, minted)).status, 200, 'one second later it is accepted');
  const wrong = await post(app.url, `/api/v1/voice/sessions/${minted.sessionId}/heartbeat`, {
    token: minted.controlToken.slice(0, -4) + 'AAAA',
  });
  t.equal(wrong.status, 404);
  t.equal(wrong.body.code, 'VOICE_SESSION_NOT_FOUND');
  const unknown = await post(app.url, '/api/v1/voice/sessions/vs_doesnotexist0000000000/heartbeat', {
    token: minted.controlToken,
  });
  t.equal(unknown.status, 404, 'a token does not open another session');
});

t.test('service reconnecting to the provider: degraded with a shorter nextHeartbeatMs', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  // The simulator drops the link after 200 ms and answers every resume with 503: the adapter keeps retrying.
  const assistant = await voiceAssistant(app, owner, {
    instructions: 'Be brief. [sim:drop-after=200,refuse-reconnect=503]',
  });
  const minted = await mintWithKey(app, owner, assistant);
  const degraded = await heartbeatUntil(app, minted, 'degraded');
  t.same(degraded, { status: 'degraded', nextHeartbeatMs: 2000 });
  t.ok(degraded.nextHeartbeatMs < minted.heartbeatIntervalMs!);
  t.match((await endWithKey(app, owner, minted.sessionId)).body, { endReason: null });
});

t.test('control link lost (reconnect refused): control_lost', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, {
    instructions: 'Be brief. [sim:drop-after=200,refuse-reconnect]',
  });
  const minted = await mintWithKey(app, owner, assistant);
  const ended = await heartbeatUntil(app, minted, 'ended');
  t.equal(ended.endReason, 'control_lost');
  t.match((await endWithKey(app, owner, minted.sessionId)).body, {
    status: 'ended',
    endReason: 'control_lost',
    usageFinalized: false,
  });
});

t.test('idle: one spoken check-in, then idle', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { idleTimeoutSeconds: 30 } });
  const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
  const session = live(app, minted.sessionId);
  const spoken: string[] = [];
  session.subscribe({ onOutputTranscript: (d) => void spoken.push(d.text) });
  app.clock.advance(15_000);
  t.same(spoken, [], 'nothing said while the caller is only briefly quiet');
  app.clock.advance(6_000); // 21 s: the check-in is due 10 s before the 30 s idle end
  await waitFor(() => spoken.join(' ').includes('still'), 'the spoken check-in');
  t.equal(session.gate.current.reason, 'social', 'the gate opens for the check-in');
  t.equal(session.status, 'active');
  app.clock.advance(9_000);
  app.clock.advance(1_000);
  const end = await waitFor(async () => {
    const res = await endWithKey(app, owner, minted.sessionId);
    return res.body.endReason === 'idle' ? res.body : undefined;
  }, 'idle end');
  t.match(end, { status: 'ended', endReason: 'idle' });
});

t.test('visitor speech resets idle', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { idleTimeoutSeconds: 30 } });
  const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
  const session = live(app, minted.sessionId);
  app.clock.advance(25_000);
  speak(session);
  await waitFor(
    () => session.gate.current.reason !== 'start' && session.gate.current.reason !== 'social',
    'speech heard',
  );
  app.clock.advance(25_000);
  t.equal(session.status, 'active', '50 s after the start, 25 s after speech: still on');
  await endWithKey(app, owner, minted.sessionId);
});

t.test('time cap: a short spoken warning, then max_duration', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { maxDurationSeconds: 60 } });
  const minted = await mintWithKey(app, owner, assistant);
  const session = live(app, minted.sessionId);
  const spoken: string[] = [];
  session.subscribe({ onOutputTranscript: (d) => void spoken.push(d.text) });
  for (let s = 0; s < 55; s += 5) {
    app.clock.advance(5000);
    await heartbeat(app, minted);
  }
  await waitFor(() => spoken.join(' ').includes('time'), 'the spoken warning');
  app.clock.advance(5000);
  const body = await heartbeatUntil(app, minted, 'ended');
  t.equal(body.endReason, 'max_duration');
});

t.test('account allowance reached (quota seam): usage_limit', async (t) => {
  let allow = true;
  const settled: number[] = [];
  const quota: VoiceQuota = {
    admit: async () => undefined,
    extend: async () => allow,
    settle: async (_r, seconds) => void settled.push(seconds),
    release: async () => undefined,
  };
  const app = await startVoiceApp(t, { voice: { quota, limits: { quotaCheckEveryMs: 5000 } } });
  const owner = await ownerWithVoice(app);
  const minted = await mintWithKey(app, owner, await voiceAssistant(app, owner));
  app.clock.advance(5000);
  t.equal((await heartbeat(app, minted)).body.status, 'healthy');
  allow = false;
  const body = await heartbeatUntil(app, minted, 'ended', 5000);
  t.equal(body.endReason, 'usage_limit', 'owners see the real reason');
  t.match((await endWithKey(app, owner, minted.sessionId)).body, { status: 'ended', endReason: 'usage_limit' });
  t.equal(settled.length, 1, 'settled once');
});

t.test('the media socket goes away without an end: disconnected after the grace period', async (t) => {
  const app = await startVoiceApp(t, { voice: { limits: { mediaGraceMs: 10_000 } } });
  const owner = await ownerWithVoice(app);
  const minted = await mintWithKey(app, owner, await voiceAssistant(app, owner), { capabilities: ['playback_gate'] });
  const session = live(app, minted.sessionId);
  session.onMediaAttached();
  session.onMediaDetached();
  app.clock.advance(5000);
  session.onMediaAttached(); // reconnected within the grace period
  app.clock.advance(20_000);
  t.equal(session.status, 'active');
  session.onMediaDetached();
  app.clock.advance(10_000);
  const end = await waitFor(async () => {
    const res = await endWithKey(app, owner, minted.sessionId);
    return res.body.endReason === 'disconnected' ? res.body : undefined;
  }, 'disconnected');
  t.match(end, { endReason: 'disconnected' });
});

t.test('SIGTERM drain: sessions end with shutdown before the server stops', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const minted = await mintWithKey(app, owner, await voiceAssistant(app, owner));
  await app.app.close(1000);
  const [row] = await app.database.sql`select state, end_reason from voice_sessions where id = ${minted.sessionId}`;
  t.match(row, { state: 'ended', endReason: 'shutdown' });
  t.equal(app.app.voice.sessions.size, 0);
});

t.test(
  'mint refusals: capabilities first, scope, voice disabled, consent, unconfirmed lock (502, nothing billed)',
  async (t) => {
    const app = await startVoiceApp(t);
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    const mint = (body: Record<string, unknown>, headers = bearer(owner.secret)) =>
      post(app.url, '/api/v1/voice/sessions', { assistantId: assistant.publicId, ...body }, headers);

    let res = await mint({ capabilities: ['heartbeat', 'playback_gate', 'telepathy'] });
    t.equal(res.status, 400, 'unknown capability');
    t.equal(res.body.code, 'VALIDATION_FAILED');
    res = await mint({ capabilities: ['heartbeat'] }, {});
    t.equal(res.status, 403, 'no playback_gate: 403 even before identity');
    t.equal(res.body.reason, 'client_update_required');
    res = await mint({}, bearer(owner.secret));
    t.equal(res.body.reason, 'client_update_required', 'no capabilities at all');
    t.match(res.body.error, /`capabilities` must include "playback_gate"/, 'the refusal names the missing field');
    t.match(res.body.details, { field: 'capabilities' });

    const chatOnly = await createOwner(app.database.sql, { scopes: ['chat'] });
    res = await mint({ capabilities: ['playback_gate'] }, bearer(chatOnly.secret));
    t.equal(res.status, 403, 'voice is not implied by chat');
    t.equal(res.body.code, 'AUTH_MISSING_SCOPE');
    res = await mint({ capabilities: ['playback_gate'] }, {});
    t.equal(res.status, 403, 'keyless from a site not on the allowlist');

    const disabled = await voiceAssistant(app, owner, { voice: { enabled: false } });
    res = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: disabled.id, capabilities: ['playback_gate'] },
      bearer(owner.secret),
    );
    t.equal(res.status, 403);
    t.equal(res.body.code, 'VOICE_DISABLED');

    const recorded = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: true } });
    res = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: recorded.publicId, capabilities: ['playback_gate'] },
      bearer(owner.secret),
    );
    t.equal(res.status, 400, 'recorded, consent required, none given');
    t.equal(res.body.code, 'VOICE_CONSENT_REQUIRED');
    res = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: recorded.publicId, capabilities: ['playback_gate'], recordingConsent: true },
      bearer(owner.secret),
    );
    t.match(res.body, { recording: { enabled: true, consented: true } });
    const noConsentNeeded = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: false } });
    res = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: noConsentNeeded.publicId, capabilities: ['playback_gate'] },
      bearer(owner.secret),
    );
    t.match(
      res.body,
      { recording: { enabled: true, consented: false } },
      'API keys need consent only when the assistant requires it',
    );

    const unlocked = await voiceAssistant(app, owner, { instructions: 'Be brief. [sim:lock-unconfirmed]' });
    res = await post(
      app.url,
      '/api/v1/voice/sessions',
      { assistantId: unlocked.publicId, capabilities: ['playback_gate'] },
      bearer(owner.secret),
    );
    t.equal(res.status, 502, 'the data-channel restriction was not confirmed');
    t.equal(res.body.reason, 'voice_unavailable');
    t.equal(res.body.code, 'VOICE_PROVIDER_UNCONFIRMED');
    const [failed] = await app.database
      .sql`select state, billable_seconds, conversation_id from voice_sessions where assistant_id = ${unlocked.id}`;
    t.match(
      failed,
      { state: 'failed', billableSeconds: 0, conversationId: null },
      'recorded as failed, nothing billed',
    );
  },
);
