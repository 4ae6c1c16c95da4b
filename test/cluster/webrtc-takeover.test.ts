import t from 'tap';
import { join } from 'node:path';
import { startTestApp, TEST_SECRET_KEY } from '../helpers/app.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { bearer } from '../helpers/identity.js';
import {
  assertBilledRealTime,
  assertSettledOnce,
  FAULT_ENV,
  startReplayingSimulator,
  voiceSetup,
  type Call,
} from '../fault/voice.js';
import { timedRequest } from '../fault/helpers.js';
import { WebRtcCaller } from '../providers/voice/webrtc-caller.js';
import { ndjsonReader, openGate, waitFor, type Minted } from '../voice/helpers.js';
import { startKillableInstance } from '../fault/killable-instance.js';
import { scratchDir } from '../helpers/scratch.js';

/**
 * A WebRTC call outlives the instance that minted it: the caller's audio runs to the provider, so when the owner is
 * killed -9 the survivor takes the call over (the next ownership generation) and re-attaches the sideband; the caller
 * keeps hearing the assistant, heartbeats on the survivor come back healthy, and the call is settled once.
 */
t.test(
  'the owner of a WebRTC call is killed: the survivor takes it over, the call goes on, settled once',
  async (t) => {
    const sim = await startReplayingSimulator(t);
    const survivor = await startTestApp(t, {
      env: { ...FAULT_ENV, VOICE_PROVIDER_URL: sim.url },
      voice: { ownership: { renewEveryMs: 1000, ttlMs: 3000 } },
    });
    const doomed = await startKillableInstance(t, {
      ...FAULT_ENV,
      DATABASE_URL: survivor.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: survivor.redisPrefix,
      SECRET_KEY: TEST_SECRET_KEY,
      VOICE_PROVIDER_URL: sim.url,
      INSTANCE_ID: 'instance-doomed',
      DATA_DIR: scratchDir('parley-webrtc-takeover-'),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      VOICE_OWNERSHIP_TTL_SECONDS: '3', // renewed every second
      // A shared machine can be slow to answer the first query: the start is not what this test is about.
      DATABASE_QUERY_TIMEOUT_MS: '20000',
    });
    const { owner: account, assistant } = await voiceSetup(survivor);
    const caller = new WebRtcCaller();
    t.teardown(() => caller.close());

    const res = await timedRequest(`${doomed.url}/api/v1/voice/sessions`, {
      json: {
        assistantId: assistant.publicId,
        capabilities: ['heartbeat', 'playback_gate'],
        transport: { type: 'webrtc', sdp: await caller.offer() },
      },
      headers: bearer(account.secret),
    });
    t.equal(res.status, 200, 'minted on the instance that will die');
    const minted = res.body as Minted & { transport: { sdp: string } };
    caller.answer(minted.transport.sdp);
    caller.talk(true);
    const joinedAt = performance.now();
    const call: Call = { minted, media: undefined as never, joinedAt, owner: account, app: survivor };
    const beat = (base: string) =>
      timedRequest(`${base}/api/v1/voice/sessions/${minted.sessionId}/heartbeat`, {
        json: { token: minted.controlToken },
      });

    await waitFor(async () => (await beat(doomed.url)).body?.status === 'healthy', 'the owner answers healthy');
    // A turn before the kill: the caller hears the assistant over WebRTC.
    const record = (await waitFor(() => [...sim.stats.sessions.values()][0], 'the provider session'))!;
    await waitFor(() => record.inputTranscripts.length >= 2, 'the provider hears the caller', 15_000);
    caller.talk(false);
    await waitFor(() => caller.voicedPacketsIn > 0, 'the assistant heard before the kill', 15_000);
    await waitFor(async () => {
      const [row] = await survivor.database.sql<{ n: number }[]>`
      select count(*)::int as n from messages where conversation_id = ${minted.conversationId}`;
      return row!.n >= 1;
    }, 'a transcript line stored by the owner');
    caller.talk(true);

    await waitFor(async () => {
      const [written] = await survivor.database.sql<{ n: number }[]>`
        select count(*)::int as n from voice_timelines where session_id = ${minted.sessionId}`;
      return written!.n === 1;
    }, 'the owner wrote the call timeline (every 5 s)');
    await doomed.kill();
    const storedBefore = await survivor.database.sql<{ id: string; role: string; content: string }[]>`
      select id, role, content from messages where conversation_id = ${minted.conversationId}`;
    const killedAt = performance.now();

    // Heartbeats to the survivor from the kill on, once a second (what a client behind the proxy sends).
    const statuses: string[] = [];
    await waitFor(
      async () => {
        const r = await beat(survivor.url);
        const status = r.status === 200 ? r.body.status : `http_${r.status}`;
        if (statuses.at(-1) !== status) statuses.push(status);
        if (status === 'healthy') return true;
        await new Promise((resolve) => setTimeout(resolve, 1050));
        return false;
      },
      'the survivor to answer healthy',
      20_000,
    );
    const session = survivor.app.voice.sessions.get(minted.sessionId);
    t.ok(session, 'the call runs on the survivor');
    t.equal(session?.linkState, 'connected', 'its sideband is attached');
    const takenOverMs = performance.now() - killedAt;
    t.comment(
      `heartbeats on the survivor after the kill: ${statuses.join(' -> ')} (healthy ${takenOverMs.toFixed(0)} ms after the kill)`,
    );
    t.notOk(
      statuses.some((s) => s === 'lost' || s === 'ended'),
      'never told the call was lost or ended',
    );
    t.ok(record.resumes >= 1, 'the sideband re-attached at the provider');
    // Clients keep the gate decision with the highest seq: the survivor's continue above the dead owner's.
    const gate = ndjsonReader(await openGate(survivor, minted));
    const first = (await gate.next()) as { type: string; seq: number };
    t.ok(first.type === 'gate' && first.seq >= 1_000_000, `the survivor's gate seq continues higher (${first.seq})`);
    await gate.cancel();
    t.notOk(record.ended, 'the provider session never stopped');

    // The caller keeps talking and keeps hearing the assistant.
    const heardBefore = caller.voicedPacketsIn;
    let words = 0;
    session!.subscribe({ onInputTranscript: () => void words++ });
    await waitFor(() => words >= 2, "the caller's words reach the survivor over the sideband", 15_000);
    const transcribedBefore = record.inputTranscripts.length;
    await waitFor(() => record.inputTranscripts.length > transcribedBefore, 'more of the caller heard', 15_000);
    caller.talk(false);
    const spokenBefore = record.outputTranscripts.length;
    await waitFor(
      () => caller.voicedPacketsIn > heardBefore && record.outputTranscripts.length > spokenBefore,
      'the assistant answers and is still heard after the takeover',
      15_000,
    );

    const timeline = (await (
      await fetch(`${survivor.url}/api/v1/voice/sessions/${minted.sessionId}/timeline`, {
        headers: bearer(account.secret),
      })
    ).json()) as { transport: string; events: { type: string; detail?: Record<string, unknown> }[] };
    const types = timeline.events.map((e) => e.type);
    t.equal(timeline.transport, 'webrtc', 'the timeline, read on the survivor');
    t.ok(types.indexOf('minted') === 0, 'the timeline carries on from what the dead owner wrote');
    t.match(
      timeline.events.find((e) => e.type === 'taken_over'),
      { detail: { from: 'instance-doomed', generation: 2 } },
      'then the takeover',
    );

    const [row] = await survivor.database.sql<{ ownerInstance: string; ownerGeneration: number }[]>`
    select owner_instance, owner_generation from voice_sessions where id = ${minted.sessionId}`;
    t.equal(row!.ownerInstance, survivor.config.instanceId, 'the row names the survivor');
    t.equal(row!.ownerGeneration, 2, 'at the next generation');

    const ended = await timedRequest(`${survivor.url}/api/v1/voice/sessions/${minted.sessionId}/end`, {
      json: {},
      headers: bearer(account.secret),
    });
    t.equal(ended.status, 200, 'ended by its caller on the survivor');
    t.equal(ended.body.endReason, null);
    const connectedMs = performance.now() - joinedAt;
    const settled = await assertSettledOnce(t, survivor.database.sql, call, { state: 'ended' });
    t.equal(settled.billableSeconds, ended.body.billableSeconds, 'stored as the caller was told');
    // Billed from the dead owner's last persisted usage (every second) plus the survivor's time.
    assertBilledRealTime(t, settled.billableSeconds, connectedMs, 'the call across both instances', 3);
    await waitFor(() => record.ended, 'hung up at the provider');
    t.equal(record.clientEvents.filter((e) => e === 'hangup').length, 1, 'hung up once');
    const lines = await survivor.database.sql<{ id: string; role: string; content: string }[]>`
      select id, role, content from messages where conversation_id = ${minted.conversationId} order by created_at`;
    const added = lines.filter((l) => !storedBefore.some((b) => b.id === l.id));
    t.ok(
      added.some((l) => l.role === 'user'),
      'the caller transcribed after the takeover too',
    );
    t.notOk(
      added.some((l) => storedBefore.some((b) => b.role === l.role && b.content.includes(l.content))),
      "the provider's replay is not stored twice",
    );
  },
);
