import t from 'tap';
import { Recorder, simProvider, startSim, waitFor } from './helpers.js';
import { decodeInputAudioFast } from '../../../src/providers/voice/protocol.js';
import { WebRtcCaller } from './webrtc-caller.js';

/** WebRTC sessions: the simulator answers with a real peer; Parley's adapter holds only the sideband. */

t.test(
  'a WebRTC session: the answer comes after the lock, audio flows both ways, the sideband supervises',
  async (t) => {
    const sim = await startSim(t);
    const provider = simProvider(sim);
    const caller = new WebRtcCaller();
    t.teardown(() => caller.close());
    const rec = new Recorder();
    let reflected = 0;
    const { session, answerSdp } = await provider.startWebRtcSession(
      { instructions: 'Be brief.' },
      await caller.offer(),
      {
        handlers: { ...rec, onInputAudio: () => void reflected++ },
      },
    );
    t.match(answerSdp, /m=audio \d+ UDP\/TLS\/RTP\/SAVPF 0\r?\n/, 'the simulator answers PCMU');
    t.equal(session.state, 'connected');
    caller.answer(answerSdp);
    caller.talk(true);
    await waitFor(() => rec.input.length >= 2, 'input transcripts over the sideband');
    caller.talk(false);
    await waitFor(() => caller.packetsIn >= 3 && caller.peakIn > 1000, 'the assistant is heard over WebRTC');
    t.ok(reflected > 0, 'the caller audio is reflected on the sideband');
    t.ok(rec.usage.length > 0, 'usage arrives on the sideband');
    t.equal(session.sendAudio(Buffer.alloc(960)), false, 'no audio passes through Parley');
    const closed = await session.close();
    t.equal(closed.reason, 'close_requested');
    t.equal(closed.usageFinal, true, 'final usage from session.closed after the hangup');
    const record = sim.stats.sessions.get(session.id)!;
    t.ok(record.clientEvents.includes('hangup'), 'hung up at the provider');
    t.equal(record.ended, true);
  },
);

t.test('a provider that does not echo the empty list: refused, and the session is hung up', async (t) => {
  const sim = await startSim(t, { defaultFaults: 'lock-unconfirmed=all' });
  const provider = simProvider(sim);
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  const error = await provider.startWebRtcSession({}, await caller.offer()).then(
    () => undefined,
    (e: { code?: string }) => e,
  );
  t.equal(error?.code, 'VOICE_PROVIDER_UNCONFIRMED');
  await waitFor(() => [...sim.stats.sessions.values()].every((s) => s.ended), 'hung up');
});

t.test('webrtc-refused: the create is refused', async (t) => {
  const sim = await startSim(t, { defaultFaults: 'webrtc-refused' });
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  const error = await simProvider(sim)
    .startWebRtcSession({}, await caller.offer())
    .then(
      () => undefined,
      (e: { code?: string; providerStatus?: number }) => e,
    );
  t.equal(error?.code, 'VOICE_PROVIDER_REFUSED');
  t.equal(error?.providerStatus, 503);
});

t.test('a dropped sideband is re-attached; replayed events are delivered once', async (t) => {
  const sim = await startSim(t, { defaultFaults: 'drop-after=300' });
  const provider = simProvider(sim, { sidebandReattachDelaysMs: [0, 50, 100, 200, 400] });
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  const rec = new Recorder();
  const { session, answerSdp } = await provider.startWebRtcSession({}, await caller.offer(), { handlers: rec });
  caller.answer(answerSdp);
  caller.talk(true);
  await waitFor(() => session.stats.reconnects === 1, 're-attached');
  t.same(rec.states.slice(0, 3), ['connected', 'reconnecting', 'connected']);
  await waitFor(() => session.stats.duplicateEvents > 0, 'the replay was deduplicated');
  await waitFor(() => rec.input.length >= 3, 'transcripts go on after the re-attach');
  const record = sim.stats.sessions.get(session.id)!;
  const seen = rec.input.map((d) => `${d.startMs}`);
  t.equal(new Set(seen).size, seen.length, 'no transcript line twice');
  t.ok(record.inputTranscripts.length >= rec.input.length);
  await session.close();
});

t.test('a sideband that cannot be re-attached is lost and hung up', async (t) => {
  const sim = await startSim(t, { defaultFaults: 'drop-after=200,refuse-reconnect=503' });
  const provider = simProvider(sim, { sidebandReattachDelaysMs: [0, 20, 40], sidebandReattachWindowMs: 1000 });
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  const rec = new Recorder();
  const { session, answerSdp } = await provider.startWebRtcSession({}, await caller.offer(), { handlers: rec });
  caller.answer(answerSdp);
  await waitFor(() => rec.closed.length === 1, 'closed');
  t.equal(rec.closed[0]!.reason, 'connection_lost');
  t.equal(session.state, 'lost');
  await waitFor(() => sim.stats.sessions.get(session.id)!.ended, 'hung up at the provider');
  t.ok(sim.stats.sessions.get(session.id)!.clientEvents.includes('hangup'));
});

t.test("the sideband's reflected caller audio is decoded without parsing; any other shape falls back", async (t) => {
  const pcm = Buffer.from([1, 2, 3, 4, 5, 6]);
  const frame = Buffer.from(`{"type":"session.input_audio.append","audio":"${pcm.toString('base64')}"}`);
  t.same(decodeInputAudioFast(frame), pcm);
  const withId = `{"type":"session.input_audio.append","audio":"${pcm.toString('base64')}","event_id":"e1"}`;
  t.equal(decodeInputAudioFast(Buffer.from(withId)), undefined, 'an extra field takes the JSON path');
  t.equal(decodeInputAudioFast(Buffer.from('{"type":"session.output_audio.delta","delta":"AAAA"}')), undefined);
});
