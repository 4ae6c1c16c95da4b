import t from 'tap';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/log/index.js';
import { ManualClock, VoiceProviderError, createVoiceProvider } from '../../../src/providers/voice/index.js';
import { FAST_ADAPTER, Recorder, seqFrame, simProvider, sleep, startSim, voicedFrame, waitFor } from './helpers.js';

/** Adapter behaviour that is not part of the provider contract: defaults, credentials, logging, backpressure. */

t.test('the default lock timeout is 3 s (manual clock, no sleeping)', async (t) => {
  const sim = await startSim(t);
  const clock = new ManualClock();
  const provider = createVoiceProvider({
    kind: 'simulator',
    url: sim.url,
    clock,
    simulatorFaults: 'slow-start=60000',
    keepaliveMs: 0,
  });
  let outcome: unknown = 'pending';
  const started = provider.startSession({}).then(
    () => (outcome = 'resolved'),
    (error: unknown) => (outcome = error),
  );
  await waitFor(() => sim.stats.connections === 1, 'the socket');
  await sleep(20); // session.start is on the wire; the provider is "thinking"
  clock.advance(2999);
  await sleep(10);
  t.equal(outcome, 'pending', 'still waiting at 2.999 s');
  clock.advance(1);
  await started;
  t.type(outcome, VoiceProviderError);
  t.equal((outcome as VoiceProviderError).code, 'VOICE_PROVIDER_UNCONFIRMED', 'unconfirmed at exactly 3 s');
});

t.test('a wrong key is fatal AUTH and the key never reaches the logs', async (t) => {
  const sim = await startSim(t, { apiKey: 'sk-right' });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ level: 'debug' }, sink);
  const wrong = createVoiceProvider({
    kind: 'gpt-live',
    url: sim.url,
    apiKey: 'sk-wrong-secret',
    model: 'gpt-live-1',
    logger,
    ...FAST_ADAPTER,
  });
  const error = await wrong.startSession({}).then(
    () => undefined,
    (e: unknown) => e as VoiceProviderError,
  );
  t.equal(error?.code, 'VOICE_PROVIDER_AUTH');
  t.equal(error?.providerStatus, 401);
  t.equal(error?.fatal, true);
  // A session that drops and resumes logs too: none of it may carry the key or what was said.
  const right = createVoiceProvider({
    kind: 'gpt-live',
    url: sim.url,
    apiKey: 'sk-right',
    model: 'gpt-live-1',
    logger,
    ...FAST_ADAPTER,
  });
  const rec = new Recorder();
  const session = await right.startSession({ instructions: '[sim:drop-after=50]' }, { handlers: rec });
  for (let i = 0; i < 10; i++) session.sendAudio(voicedFrame());
  await waitFor(() => rec.states.length >= 3, 'resume');
  await session.close();
  await sleep(20);
  const text = lines.join('');
  t.ok(lines.length >= 3, 'something was logged');
  t.notMatch(text, /sk-wrong-secret|sk-right/, 'no key in logs');
  for (const d of rec.input) t.notMatch(text, new RegExp(`"${d.text}"`), 'no transcript in logs');
});

t.test('faults from the simulator provider option travel as a header', async (t) => {
  const sim = await startSim(t);
  const provider = simProvider(sim, { simulatorFaults: 'start-refused=429' });
  const error = await provider.startSession({}).then(
    () => undefined,
    (e: unknown) => e as VoiceProviderError,
  );
  t.equal(error?.providerStatus, 429);
  t.equal(error?.fatal, false, 'rate limiting is worth retrying');
});

t.test('aborting a start rejects it and leaves nothing running', async (t) => {
  const sim = await startSim(t);
  const provider = simProvider(sim, { simulatorFaults: 'slow-start=5000' });
  const controller = new AbortController();
  const started = provider.startSession({}, { signal: controller.signal });
  await waitFor(() => sim.stats.connections === 1, 'the socket');
  controller.abort();
  const error = await started.then(
    () => undefined,
    (e: unknown) => e as VoiceProviderError,
  );
  t.equal(error?.code, 'VOICE_PROVIDER_ABORTED');
});

t.test('a full outgoing queue drops the oldest audio and keeps memory bounded', async (t) => {
  // The provider stops reading: kernel buffers fill, then the adapter queue, then the oldest frames go.
  const sim = await startSim(t, { defaultFaults: 'echo,stall-reads=400' });
  const frameBytes = Buffer.byteLength(
    `{"type":"session.input_audio.append","audio":"${seqFrame(0).toString('base64')}"}`,
  );
  const provider = simProvider(sim, { highWaterBytes: 64 * 1024, maxQueuedBytes: 20 * frameBytes });
  const rec = new Recorder();
  const session = await provider.startSession({}, { handlers: rec });
  let sent = 0;
  while (session.stats.audioFramesDropped === 0 && sent < 40_000) session.sendAudio(seqFrame(sent++));
  for (let i = 0; i < 200; i++) session.sendAudio(seqFrame(sent++)); // keep pushing while backlogged
  const dropped = session.stats.audioFramesDropped;
  t.ok(dropped > 0, `${dropped} of ${sent} frames dropped`);
  await waitFor(() => rec.audio.length + dropped === sent, 'the stalled provider to catch up', 10_000);
  const seqs = rec.seqs;
  t.equal(seqs.at(-1), sent - 1, 'the newest frame got through');
  t.ok(
    seqs.every((s, i) => i === 0 || s > seqs[i - 1]!),
    'order kept',
  );
  const gaps = seqs.filter((s, i) => i > 0 && s !== seqs[i - 1]! + 1).length;
  t.equal(gaps, 1, 'one contiguous run of old frames was dropped');
  const tail = seqs.length - seqs.findIndex((s, i) => i > 0 && s !== seqs[i - 1]! + 1);
  t.ok(tail <= 20, `at most the queue's 20 frames waited (${tail})`);
  t.equal(session.sendAudio(seqFrame(sent)), true);
  await session.close();
});

t.test('an in-process simulator forgets the oldest ended sessions (bounded memory)', async (t) => {
  const sim = await startSim(t, { retainEnded: 1 });
  const provider = simProvider(sim);
  const first = await provider.startSession({});
  await first.close();
  const second = await provider.startSession({});
  t.ok(sim.stats.sessions.has(first.id), 'an ended session is kept while within the limit');
  await second.close();
  t.same([...sim.stats.sessions.keys()], [second.id]);
  t.equal(sim.stats.sessionsActive, 0);
});

t.test(
  'keepalive: a provider that talks is never pinged; a silent one is pinged each tick and kept while it answers',
  async (t) => {
    const talking = await startSim(t, { usageIntervalMs: 20 });
    const silent = await startSim(t, { usageIntervalMs: 600_000 });
    const clock = new ManualClock();
    const sessions = await Promise.all(
      [talking, silent].map((sim) => simProvider(sim, { clock, keepaliveMs: 1000 }).startSession({})),
    );
    for (let tick = 1; tick <= 3; tick++) {
      await sleep(60); // the talking provider sends usage meanwhile
      clock.advance(1000);
      await waitFor(() => silent.stats.pingsReceived === tick, `ping ${tick} to the silent provider`);
    }
    await sleep(60);
    t.equal(talking.stats.pingsReceived, 0, 'no keepalive frame to a provider heard from since the last tick');
    t.equal(silent.stats.pingsReceived, 3, 'the silent provider is probed every tick');
    t.same(
      sessions.map((s) => s.state),
      ['connected', 'connected'],
      'both links kept: the silent one answers its pings',
    );
    await Promise.all(sessions.map((s) => s.close()));
  },
);

t.test('keepalive: one timer per adapter instance, however many calls are open (none once they end)', async (t) => {
  const silent = await startSim(t, { usageIntervalMs: 600_000 });
  const clock = new ManualClock();
  const provider = simProvider(silent, { clock, keepaliveMs: 1000 });
  const sessions = await Promise.all([1, 2, 3, 4, 5].map(() => provider.startSession({})));
  t.equal(clock.pending, 1, 'five open calls, one pending timer: the shared keepalive tick');
  clock.advance(1000);
  await waitFor(() => silent.stats.pingsReceived === 5, 'every silent link pinged on the one tick');
  t.equal(clock.pending, 1, 'the tick re-armed itself once');
  await Promise.all(sessions.map((s) => s.close()));
  t.equal(clock.pending, 0, 'no timer left when no call is open');
});
