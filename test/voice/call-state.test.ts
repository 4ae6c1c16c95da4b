import t from 'tap';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { WebRtcCaller } from '../providers/voice/webrtc-caller.js';
import {
  endWithKey,
  live,
  mintAsWidget,
  mintWithKey,
  ownerWithVoice,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from './helpers.js';

/**
 * No call leaves state behind: calls that end in every way this instance sees (the caller's hang-up, a visitor's
 * newer call superseding the older, a WebRTC call let go to the instance that took it over, the instance's shutdown)
 * leave no entry in any per-call structure (registry, supervision, settlements, timelines, transcript state, the
 * quota's grants and instance cap, caller connections).
 */
t.test('every ending leaves no per-call state', async (t) => {
  const sim = await startVoiceSimulator({ usageIntervalMs: 200, transcriptChunkMs: 100, wordMs: 40 });
  t.teardown(() => sim.close());
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER_URL: sim.url, HOSTED_USAGE_ENFORCEMENT: 'shadow' } });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const voice = app.app.voice;
  const empty = () => Object.values(voice.callStateCounts()).every((n) => n === 0);

  // Hang-up.
  const hungUp = await mintWithKey(app, owner, assistant);
  live(app, hungUp.sessionId).transcripts.add('user', 'Hello there.');
  t.equal((await endWithKey(app, owner, hungUp.sessionId)).status, 200);

  // Supersede: the visitor's newer call ends the older one; then the newer one hangs up.
  const older = await mintAsWidget(app, assistant);
  const newer = await mintAsWidget(app, assistant);
  t.same([older.status, newer.status], [200, 200]);
  await live(app, newer.body.sessionId).end(null);

  // Relinquished: another instance took the WebRTC call over (its record and row name it now).
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  const direct = await mintWithKey(app, owner, assistant, { transport: { type: 'webrtc', sdp: await caller.offer() } });
  caller.answer((direct.transport as { sdp: string }).sdp);
  const session = live(app, direct.sessionId);
  session.transcripts.add('user', 'Are you there?');
  session.transcripts.flush();
  // instance-z is alive (its presence is there), so this instance does not take the call back over.
  await app.deps.store.set('voice:instance:instance-z', String(Date.now()), { ttlMs: 120_000 });
  await app.database
    .sql`update voice_sessions set owner_instance = 'instance-z', owner_generation = owner_generation + 1
    where id = ${direct.sessionId}`;
  await app.deps.store.set(
    `voice:owner:${direct.sessionId}`,
    JSON.stringify({ instanceId: 'instance-z', generation: 2, expiresAt: Date.now() + 60_000 }),
    { ttlMs: 60_000 },
  );
  await voice.renewAll();
  await waitFor(() => !voice.sessions.has(direct.sessionId), 'the taken-over call to be let go here');
  t.equal(session.status, 'ended', 'let go here');

  // Shutdown: the last call ends with the instance.
  const last = await mintWithKey(app, owner, assistant);
  t.ok(voice.sessions.has(last.sessionId));
  await voice.stop();

  const counts = await waitFor(
    () => (empty() ? voice.callStateCounts() : undefined),
    'every per-call entry to go',
    10_000,
  ).catch(() => voice.callStateCounts());
  const left = [...voice.sessions.values()].map(
    (s) =>
      `${s.id === older.body.sessionId ? 'older' : s.id === newer.body.sessionId ? 'newer' : s.id === direct.sessionId ? 'direct' : s.id === last.sessionId ? 'last' : s.id === hungUp.sessionId ? 'hungUp' : s.id}:${s.status}`,
  );
  t.same(
    counts,
    {
      sessions: 0,
      supervised: 0,
      settling: 0,
      timelines: 0,
      turns: 0,
      quotaLocal: 0,
      quotaChains: 0,
      callerConnections: 0,
    },
    `no per-call structure holds an entry (left: ${left.join(', ')})`,
  );
});
