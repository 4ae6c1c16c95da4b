import t, { type Test } from 'tap';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { WebRtcCaller } from '../providers/voice/webrtc-caller.js';
import {
  endWithKey,
  heartbeat,
  live,
  mintWithKey,
  ownerWithVoice,
  post,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from './helpers.js';
import { bearer } from '../helpers/identity.js';

/**
 * WebRTC calls through the whole service: the mint passes the caller's offer to the provider (the simulator answers
 * with a real peer) and returns its answer; Parley holds the sideband: transcripts land in the conversation, presence
 * (and billing) follow the caller's reflected audio, and ending the call hangs it up at the provider.
 */

async function setup(t: Test, instructions = 'Be brief.') {
  const sim = await startVoiceSimulator({ usageIntervalMs: 200, transcriptChunkMs: 100, wordMs: 40 });
  t.teardown(() => sim.close());
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER_URL: sim.url } });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { instructions });
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  return { sim, app, owner, assistant, caller };
}

t.test(
  'a WebRTC call: answer at the mint, transcripts in the conversation, billed with a caller, hung up',
  async (t) => {
    const { sim, app, owner, assistant, caller } = await setup(t);
    const minted = await mintWithKey(app, owner, assistant, {
      transport: { type: 'webrtc', sdp: await caller.offer() },
    });
    const transport = minted.transport as { type: string; sdp: string };
    t.equal(transport.type, 'webrtc');
    t.match(transport.sdp, /^v=0/, 'the provider answer');
    t.equal(minted.stream, undefined, 'no media socket');
    t.equal(minted.playbackGate, true);
    t.ok(minted.heartbeatIntervalMs);
    const session = live(app, minted.sessionId);
    t.equal(session.joined, false, 'nobody joined before the media connects');

    caller.answer(transport.sdp);
    caller.talk(true);
    await waitFor(() => session.joined, 'the caller is present (reflected audio on the sideband)');
    let words = 0;
    session.subscribe({ onInputTranscript: () => void words++ });
    await waitFor(() => words >= 2, "the caller's words over the sideband");
    caller.talk(false);
    await waitFor(() => caller.packetsIn > 0 && caller.peakIn > 1000, 'the assistant heard over WebRTC');
    await waitFor(async () => {
      const rows = await app.database.sql<{ role: string }[]>`
      select role from messages where conversation_id = ${minted.conversationId}`;
      return rows.some((r) => r.role === 'user');
    }, 'the caller transcribed into the conversation');
    t.match((await heartbeat(app, minted)).body, { status: 'healthy' });

    app.clock.advance(4000);
    const ended = await endWithKey(app, owner, minted.sessionId);
    t.equal(ended.status, 200);
    t.equal(ended.body.endReason, null);
    t.equal(ended.body.billableSeconds, 4, 'billed the time with a caller present');
    t.equal(sim.stats.sessions.size, 1);
    const record = [...sim.stats.sessions.values()][0]!;
    t.ok(record.clientEvents.includes('hangup'), 'hung up at the provider');
    await waitFor(() => record.ended, 'the provider session ended');
  },
);

t.test('a provider that does not echo the lock: 502 voice_unavailable, no answer, nothing running', async (t) => {
  const { sim, app, owner, assistant, caller } = await setup(t, 'Be brief. [sim:lock-unconfirmed=all]');
  const res = await post(
    app.url,
    '/api/v1/voice/sessions',
    {
      assistantId: assistant.publicId,
      capabilities: ['heartbeat', 'playback_gate'],
      transport: { type: 'webrtc', sdp: await caller.offer() },
    },
    bearer(owner.secret),
  );
  t.equal(res.status, 502);
  t.equal(res.body.reason, 'voice_unavailable');
  t.equal(res.body.transport, undefined);
  t.equal(app.app.voice.sessions.size, 0);
  await waitFor(() => [...sim.stats.sessions.values()].every((s) => s.ended), 'hung up at the provider');
});

t.test('an offer that is not SDP is a 400 naming the field', async (t) => {
  const { app, owner, assistant } = await setup(t);
  const res = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['playback_gate'], transport: { type: 'webrtc', sdp: 'hello' } },
    bearer(owner.secret),
  );
  t.equal(res.status, 400);
  t.match(JSON.stringify(res.body), /transport/);
});

t.test('a sideband that cannot be re-attached: degraded meanwhile, then control_lost and hung up', async (t) => {
  const { sim, app, owner, assistant, caller } = await setup(t, 'Be brief. [sim:drop-after=300,refuse-reconnect=503]');
  const minted = await mintWithKey(app, owner, assistant, { transport: { type: 'webrtc', sdp: await caller.offer() } });
  caller.answer((minted.transport as { sdp: string }).sdp);
  caller.talk(true);
  const session = live(app, minted.sessionId);
  await waitFor(() => session.linkState === 'reconnecting', 'the sideband dropped');
  t.match((await heartbeat(app, minted)).body, { status: 'degraded' }, 'heartbeats say degraded while re-attaching');
  await waitFor(() => session.status === 'ended', 'the call ended (0/1/2/4/8 s re-attaches refused)', 20_000);
  t.equal(session.endReason, 'control_lost');
  const record = [...sim.stats.sessions.values()][0]!;
  await waitFor(() => record.ended, 'hung up at the provider');
  t.ok(record.clientEvents.includes('hangup'));
});
