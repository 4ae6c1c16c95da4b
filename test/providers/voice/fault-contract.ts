import type { Test } from 'tap';
import { VoiceProviderError, type VoiceProvider } from '../../../src/providers/voice/index.js';
import type { ContractTarget } from './contract.js';
import { Recorder, seqFrame, sleep, voicedFrame, waitFor } from './helpers.js';

/** Start and expect a VoiceProviderError; returns it with the time the rejection took. */
async function startFails(
  provider: VoiceProvider,
  instructions?: string,
): Promise<{ error: VoiceProviderError; ms: number }> {
  const began = Date.now();
  try {
    await provider.startSession(instructions === undefined ? {} : { instructions });
  } catch (error) {
    if (!(error instanceof VoiceProviderError)) throw error;
    return { error, ms: Date.now() - began };
  }
  throw new Error('start unexpectedly succeeded');
}

/** Keep sending until stopped; returns a stopper. Mimics the relay's steady 20 ms frames, sped up. */
function stream(send: (seq: number) => void, perTick = 5, tickMs = 2): () => Promise<number> {
  let running = true;
  let seq = 0;
  const done = (async () => {
    while (running) {
      for (let i = 0; i < perTick; i++) send(seq++);
      await sleep(tickMs);
    }
    return seq;
  })();
  return async () => {
    running = false;
    return done;
  };
}

const VOICED = voicedFrame();

export function faultContract(t: Test, target: ContractTarget): void {
  for (const variant of ['lock-unconfirmed', 'lock-unconfirmed=all', 'lock-unconfirmed=list']) {
    t.test(`${variant}: start rejects as unconfirmed within 3 s and closes the provider session`, async (t) => {
      const { sim, provider } = await target.start(t, { adapter: { lockTimeoutMs: 3000 } });
      const { error, ms } = await startFails(provider, `Hi. [sim:${variant}]`);
      t.equal(error.code, 'VOICE_PROVIDER_UNCONFIRMED');
      t.equal(error.status, 502);
      t.equal(error.reason, 'voice_unavailable');
      t.ok(ms < 3000, `reported in ${ms} ms`);
      await waitFor(() => [...sim.stats.sessions.values()].some((r) => r.ended), 'provider session to end');
      const record = [...sim.stats.sessions.values()][0]!;
      t.equal(record.endReason, 'close_requested', 'the adapter told the provider to stop');
      t.ok(record.usageSeconds < 1, 'next to nothing to settle');
    });
  }

  t.test('a 4xx naming the data channel counts as unconfirmed (upgrade answer and error event)', async (t) => {
    const viaUpgrade = await target.start(t, { faults: 'lock-rejected' });
    const first = await startFails(viaUpgrade.provider);
    t.equal(first.error.code, 'VOICE_PROVIDER_UNCONFIRMED');
    t.equal(first.error.providerStatus, 400);
    const viaEvent = await target.start(t);
    const second = await startFails(viaEvent.provider, '[sim:lock-rejected]');
    t.equal(second.error.code, 'VOICE_PROVIDER_UNCONFIRMED');
    t.equal(viaEvent.sim.stats.sessionsStarted, 0);
  });

  t.test('slow start past the lock timeout is unconfirmed at the timeout, not when the provider wakes', async (t) => {
    const { sim, provider } = await target.start(t, { adapter: { lockTimeoutMs: 150 } });
    const { error, ms } = await startFails(provider, '[sim:slow-start=1500]');
    t.equal(error.code, 'VOICE_PROVIDER_UNCONFIRMED');
    t.ok(ms >= 140 && ms < 1000, `rejected after ${ms} ms`);
    t.equal(sim.stats.sessionsStarted, 0, 'no session is left behind on the provider');
  });

  t.test('start refused: 5xx is retryable, other 4xx is fatal, both reported as refused', async (t) => {
    const unavailable = await target.start(t, { faults: 'start-refused=503' });
    const a = await startFails(unavailable.provider);
    t.equal(a.error.code, 'VOICE_PROVIDER_REFUSED');
    t.equal(a.error.providerStatus, 503);
    t.equal(a.error.fatal, false);
    const forbidden = await target.start(t, { faults: 'start-refused=422' });
    const b = await startFails(forbidden.provider);
    t.equal(b.error.providerStatus, 422);
    t.equal(b.error.fatal, true);
    const viaEvent = await target.start(t);
    const c = await startFails(viaEvent.provider, '[sim:start-refused=500]');
    t.equal(c.error.code, 'VOICE_PROVIDER_REFUSED');
  });

  t.test('drop mid-call: reconnecting then connected, transcripts exactly once', async (t) => {
    const { sim, provider } = await target.start(t, { faults: 'drop-after=150' });
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    const stop = stream(() => session.sendAudio(VOICED));
    await waitFor(() => rec.states.includes('reconnecting'), 'the drop');
    const beforeResume = rec.input.length;
    await waitFor(() => rec.states.at(-1) === 'connected' && rec.states.length >= 3, 'the resume');
    await waitFor(() => rec.input.length >= beforeResume + 3, 'transcripts after resume');
    await stop();
    const record = sim.stats.sessions.get(session.id)!;
    await waitFor(() => rec.input.length === record.inputTranscripts.length, 'the last transcript');
    t.same(rec.states, ['connected', 'reconnecting', 'connected']);
    t.same(rec.input, record.inputTranscripts, 'every transcript the provider produced, once, in order');
    t.ok(session.stats.duplicateEvents > 0, 'replayed events were recognised and dropped');
    t.equal(session.stats.reconnects, 1);
    t.equal(record.resumes, 1);
    const closed = await session.close();
    t.equal(closed.usageFinal, true);
    t.equal(closed.usage.seconds, record.usageSeconds, 'final usage equals the simulator count');
  });

  t.test('drop mid-call in echo mode: audio is never duplicated or reordered', async (t) => {
    const { sim, provider } = await target.start(t, { faults: 'echo,drop-after=100' });
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    const stop = stream((seq) => session.sendAudio(seqFrame(seq)));
    await waitFor(() => rec.states.at(-1) === 'connected' && rec.states.length >= 3, 'the resume');
    const resumedAt = rec.audio.length;
    await waitFor(() => rec.audio.length > resumedAt + 20, 'audio after resume');
    await stop();
    await sleep(50); // let the last echoes land
    t.ok(sim.stats.sessions.get(session.id)!.resumes === 1);
    const seqs = rec.seqs;
    t.ok(
      seqs.every((s, i) => i === 0 || s > seqs[i - 1]!),
      'strictly increasing: no duplicate, no reorder',
    );
    t.ok(session.stats.audioFramesRefused > 0, 'frames offered during the reconnect were refused, not buffered');
    await session.close();
  });

  t.test('refused reconnect: reconnecting then lost at once, with the last usage', async (t) => {
    const { provider } = await target.start(t, {
      faults: 'drop-after=80,refuse-reconnect',
      adapter: { reconnectWindowMs: 10_000 },
    });
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    await waitFor(() => rec.states.includes('reconnecting'), 'the drop');
    const droppedAt = Date.now();
    await waitFor(() => rec.closed.length === 1, 'lost');
    t.ok(Date.now() - droppedAt < 2000, 'a 4xx stops retrying at once instead of using the 10 s window');
    t.same(rec.states, ['connected', 'reconnecting', 'lost']);
    t.equal(session.state, 'lost');
    t.equal(rec.errors.at(-1)?.code, 'VOICE_PROVIDER_REFUSED');
    t.equal(rec.errors.at(-1)?.providerStatus, 410);
    t.same(rec.closed[0], { reason: 'connection_lost', usage: session.usage, usageFinal: false });
    t.equal(session.sendAudio(VOICED), false);
  });

  t.test('retryable reconnect refusals are retried with backoff until the window closes', async (t) => {
    const { sim, provider } = await target.start(t, {
      faults: 'drop-after=50,refuse-reconnect=503',
      adapter: { reconnectWindowMs: 300 },
    });
    const rec = new Recorder();
    await provider.startSession({}, { handlers: rec });
    await waitFor(() => rec.closed.length === 1, 'lost');
    t.ok(sim.stats.refusedHandshakes >= 2, `${sim.stats.refusedHandshakes} attempts`);
    t.equal(rec.errors.at(-1)?.code, 'VOICE_PROVIDER_UNAVAILABLE');
    t.equal(rec.states.at(-1), 'lost');
  });

  t.test('withheld session.closed: close gives up after the timeout with unsettled usage', async (t) => {
    const { provider } = await target.start(t, { faults: 'withhold-closed', adapter: { closeTimeoutMs: 150 } });
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    await waitFor(() => rec.usage.length >= 2, 'usage');
    const began = Date.now();
    const closed = await session.close();
    t.ok(Date.now() - began >= 140, 'waited for the provider first');
    t.equal(closed.usageFinal, false, 'not a settlement');
    t.equal(closed.usage.seconds, rec.usage.at(-1), 'the last usage seen');
    t.equal(closed.reason, 'close_requested');
  });

  t.test('usage jump is reported as the provider counts it, and settled equal', async (t) => {
    const { sim, provider } = await target.start(t, { faults: 'usage-jump=600' });
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    await waitFor(() => rec.usage.length >= 3, 'usage');
    t.ok(rec.usage[0]! < 600 && rec.usage[1]! >= 600, 'the jump shows at the second update');
    const closed = await session.close();
    t.equal(closed.usage.seconds, sim.stats.sessions.get(session.id)!.usageSeconds);
    t.ok(closed.usage.seconds >= 600);
  });

  t.test('garbage frames are counted and ignored; the session keeps working', async (t) => {
    const { provider } = await target.start(t, { faults: 'garbage' });
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    for (let i = 0; i < 10; i++) session.sendAudio(VOICED);
    await waitFor(() => rec.input.length === 2 && session.stats.garbageFrames >= 5, 'transcripts amid garbage');
    t.equal(session.state, 'connected');
    t.same(rec.errors, []);
    await session.close();
  });
}
