import type { Test } from 'tap';
import {
  createVoiceProvider,
  simulatedWords,
  type VoiceProvider,
  type VoiceSimulator,
  type VoiceSimulatorOptions,
  type VoiceAdapterTuning,
} from '../../../src/providers/voice/index.js';
import { FAST_ADAPTER, Recorder, pump, silentFrame, sleep, startSim, voicedFrame, waitFor } from './helpers.js';

/**
 * The voice provider contract (docs/house-rules.md): one suite, run against every way Parley reaches a provider.
 * Both targets run the same GPT-Live adapter against the simulator; they differ in how the provider is configured
 * (`simulator` kind, or `gpt-live` kind with a bearer key the simulator checks), which is exactly the seam.
 */
export interface ContractTarget {
  name: string;
  start(
    t: Test,
    options?: { sim?: VoiceSimulatorOptions; adapter?: VoiceAdapterTuning; faults?: string },
  ): Promise<{ sim: VoiceSimulator; provider: VoiceProvider }>;
}

function withFaults(url: string, faults: string | undefined): string {
  if (faults === undefined) return url;
  const u = new URL(url);
  u.searchParams.set('sim_faults', faults);
  return u.toString();
}

export const targets: ContractTarget[] = [
  {
    name: 'simulator kind',
    async start(t, options = {}) {
      const sim = await startSim(t, options.sim);
      const provider = createVoiceProvider({
        kind: 'simulator',
        url: withFaults(sim.url, options.faults),
        ...FAST_ADAPTER,
        ...options.adapter,
      });
      return { sim, provider };
    },
  },
  {
    name: 'gpt-live kind (bearer key checked)',
    async start(t, options = {}) {
      const sim = await startSim(t, { ...options.sim, apiKey: 'sk-contract' });
      const provider = createVoiceProvider({
        kind: 'gpt-live',
        url: withFaults(sim.url, options.faults),
        apiKey: 'sk-contract',
        model: 'gpt-live-1',
        ...FAST_ADAPTER,
        ...options.adapter,
      });
      return { sim, provider };
    },
  },
];

const VOICED = voicedFrame();
const SILENT = silentFrame();

export function behaviourContract(t: Test, target: ContractTarget): void {
  t.test('start sends the lock and resolves only once it is confirmed', async (t) => {
    const { sim, provider } = await target.start(t, { sim: { recordWire: true } });
    const session = await provider.startSession({
      instructions: 'Be kind.',
      voice: 'cedar',
      delegation: { type: 'client' },
    });
    t.equal(session.lockConfirmed, true);
    t.equal(session.state, 'connected');
    t.match(session.id, /^sess_/);
    const record = sim.stats.sessions.get(session.id)!;
    const start = JSON.parse(record.wireIn[0]!) as { type: string; session: Record<string, unknown> };
    t.equal(start.type, 'session.start');
    t.same(
      start.session.client,
      { data_channel: { allowed_client_events: [] } },
      'data channel allows no client events',
    );
    t.equal(start.session.model, 'gpt-live-1');
    t.equal(start.session.instructions, 'Be kind.');
    t.same(start.session.audio, { format: { type: 'audio/pcm', rate: 24000 }, output: { voice: 'cedar' } });
    t.same(start.session.delegation, { type: 'client' });
    await session.close();
  });

  t.test('input audio yields deterministic timed transcripts, then a spoken reply', async (t) => {
    const { provider } = await target.start(t, { sim: { seed: 7 } });
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    await pump((p) => session.sendAudio(p), VOICED, 30); // 600 ms of speech = 6 transcript chunks of 100 ms
    await pump((p) => session.sendAudio(p), SILENT, 10); // a silent chunk ends the utterance
    await waitFor(() => rec.output.length === 3 && rec.audio.length === 6, 'the reply');
    const words = simulatedWords(7, 9);
    t.same(
      rec.input.map((d) => d.text),
      words.slice(0, 6),
      'input transcript follows the seeded word stream',
    );
    t.same(
      rec.input.map((d) => [d.startMs, d.endMs]),
      [0, 1, 2, 3, 4, 5].map((i) => [i * 100, (i + 1) * 100]),
      'times follow the audio',
    );
    t.same(
      rec.output.map((d) => d.text),
      words.slice(6),
      'the reply continues the stream',
    );
    t.ok(
      rec.output.every((d, i) => d.endMs - d.startMs === 40 && (i === 0 || d.startMs >= rec.output[i - 1]!.endMs)),
      'reply words are timed in order',
    );
    t.equal(rec.audioBytes, 3 * 40 * 48, '40 ms of PCM per spoken word');
    t.ok(
      rec.audio.every((b) => Math.abs(b.readInt16LE(20)) > 0 || Math.abs(b.readInt16LE(40)) > 0),
      'reply audio is the tone, not silence',
    );
    await session.close();
  });

  t.test('muted input is not transcribed; unmute resumes', async (t) => {
    const { sim, provider } = await target.start(t);
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    const record = sim.stats.sessions.get(session.id)!;
    session.mute();
    await pump((p) => session.sendAudio(p), VOICED, 10);
    await waitFor(() => record.audioFramesIn === 10, 'muted audio to arrive');
    await sleep(20);
    t.equal(record.muted, true);
    t.same(rec.input, [], 'nothing transcribed while muted');
    session.unmute();
    await pump((p) => session.sendAudio(p), VOICED, 10);
    await waitFor(() => rec.input.length === 2, 'transcripts after unmute');
    t.same(record.clientEvents.slice(1), ['session.input_audio.mute', 'session.input_audio.unmute']);
    await session.close();
  });

  t.test('instructions, thinking and commentary reach the provider; commentary is spoken', async (t) => {
    const { sim, provider } = await target.start(t);
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    session.appendInstructions('Prefer short answers.');
    session.appendThinking('The user is in a hurry.');
    session.appendCommentary('We open at nine');
    await waitFor(() => rec.output.length === 4, 'commentary speech');
    t.same(
      rec.output.map((d) => d.text),
      ['We', 'open', 'at', 'nine'],
    );
    t.same(sim.stats.sessions.get(session.id)!.clientEvents.slice(1), [
      'session.instructions.append',
      'session.thinking.append',
      'session.commentary.append',
    ]);
    await session.close();
  });

  t.test('a delegation request arrives and is answered with commentary for it', async (t) => {
    const { sim, provider } = await target.start(t, { sim: { recordWire: true } });
    const rec = new Recorder();
    const session = await provider.startSession(
      { instructions: 'Hours? [sim:delegate]', delegation: { type: 'client' } },
      { handlers: rec },
    );
    await pump((p) => session.sendAudio(p), VOICED, 10);
    await pump((p) => session.sendAudio(p), SILENT, 5);
    await waitFor(() => rec.delegations.length === 1, 'delegation');
    const record = sim.stats.sessions.get(session.id)!;
    t.same(rec.delegations[0], { id: record.delegations[0], target: 'client', offsetMs: 300 });
    t.same(rec.output, [], 'the model delegated instead of answering');
    session.appendCommentary('Nine to five', rec.delegations[0]!.id);
    await waitFor(() => rec.output.length === 3, 'the answer spoken');
    t.same(
      rec.output.map((d) => d.text),
      ['Nine', 'to', 'five'],
    );
    const sent = record.wireIn
      .map((f) => JSON.parse(f) as { type: string; delegation_id?: string })
      .find((f) => f.type === 'session.commentary.append');
    t.equal(sent?.delegation_id, rec.delegations[0]!.id, 'commentary names the delegation');
    await session.close();
  });

  t.test('usage is cumulative and the final usage equals the simulator count', async (t) => {
    const { sim, provider } = await target.start(t);
    const rec = new Recorder();
    const session = await provider.startSession({}, { handlers: rec });
    await waitFor(() => rec.usage.length >= 3, 'usage updates');
    t.ok(
      rec.usage.every((u, i) => i === 0 || u >= rec.usage[i - 1]!),
      'never decreases',
    );
    t.equal(session.usage.seconds, rec.usage.at(-1));
    const closed = await session.close();
    const record = sim.stats.sessions.get(session.id)!;
    t.equal(closed.reason, 'close_requested');
    t.equal(closed.usageFinal, true);
    t.equal(closed.usage.seconds, record.usageSeconds, 'settles exactly what the provider counted');
    t.ok(record.usageSeconds > 0);
    t.equal(record.endReason, 'close_requested');
    t.same(rec.closed, [closed], 'onClosed fires once');
    t.equal(rec.states.at(-1), 'closed');
    t.equal(session.sendAudio(VOICED), false, 'no audio after close');
    t.equal(await session.close(), closed, 'close is idempotent');
  });
}
