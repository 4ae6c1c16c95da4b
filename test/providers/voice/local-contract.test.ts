import t from 'tap';
import {
  createLocalVoiceProvider,
  type VoiceAudioFormat,
  type VoiceProvider,
} from '../../../src/providers/voice/index.js';
import { loadPronunciations } from '../../../src/providers/voice/local/engines.js';
import { prepareSessionModel, recognizeUtterance } from '../../../src/providers/voice/local/recognizer.js';
import { decodeFrame } from '../../../src/providers/voice/local/audio.js';
import { NO_DELEGATION_REPLY } from '../../../src/providers/voice/local/session.js';
import { Recorder, waitFor } from './helpers.js';
import { callAudioToWav, framesOf, localEngines, silence, spoken, wavSamples } from './local-helpers.js';

/**
 * The provider contract for the local provider (offline recognition and synthesis): the same handlers, in the same
 * order, as a hosted session, with real speech in every call format. Runs the real engines.
 */
const DOCUMENT =
  'Acme Notes is a note taking service for small teams. The premium plan costs 4.99 euros per month and includes ' +
  'unlimited notebooks. The free plan allows three notebooks. The office is open Monday to Friday from nine to five.';
const ANSWER_PASSAGE = '… The premium plan costs 4.99 euros per month. Notes are kept in Frankfurt.';
const QUESTION = 'How much does the premium plan cost';

const engines = localEngines();
function provider(): VoiceProvider {
  return createLocalVoiceProvider({ kind: 'local', engines, usageIntervalMs: 50, endOfSpeechMs: 400 });
}

function send(session: { sendAudio(b: Buffer): boolean }, frames: Buffer[]): number {
  let accepted = 0;
  for (const f of frames) if (session.sendAudio(f)) accepted++;
  return accepted;
}

/** What the answer audio says, recognized back with a model of the document. */
async function hear(raw: Buffer, audio: VoiceAudioFormat): Promise<string> {
  const model = await prepareSessionModel(DOCUMENT, await loadPronunciations(engines.dictionary));
  try {
    const wav = callAudioToWav(raw, audio);
    const words = await recognizeUtterance(wavSamples(wav), { engines, model, signal: new AbortController().signal });
    return words.map((w) => w.word).join(' ');
  } finally {
    await model.dispose();
  }
}

const FORMATS: VoiceAudioFormat[] = [
  { format: 'pcm16', sampleRateHz: 24000 },
  { format: 'pcm16', sampleRateHz: 16000 },
  { format: 'pcmu', sampleRateHz: 8000 },
  { format: 'pcma', sampleRateHz: 8000 },
];

for (const audio of FORMATS) {
  t.test(
    `a spoken question is heard, delegated, and its answer spoken (${audio.format} ${audio.sampleRateHz})`,
    async (t) => {
      const rec = new Recorder();
      let session!: Awaited<ReturnType<VoiceProvider['startSession']>>;
      rec.onDelegation = (r) => {
        rec.delegations.push(r);
        session.appendInstructions('Answer only from the commentary.', r.id);
        session.appendCommentary(ANSWER_PASSAGE, r.id);
      };
      session = await provider().startSession(
        { audio, delegation: { type: 'client' }, speechHints: DOCUMENT },
        { handlers: rec },
      );
      t.equal(session.lockConfirmed, true);
      t.equal(session.state, 'connected');
      t.match(session.id, /^sess_local_/);
      const question = framesOf(spoken(QUESTION, audio), audio);
      t.equal(send(session, [...silence(200, audio), ...question, ...silence(1000, audio)]), question.length + 60);
      await waitFor(() => rec.delegations.length === 1, 'the delegation', 20_000);
      const heard = rec.input.map((d) => d.text).join(' ');
      t.match(heard, /premium|plan|cost/, `the question is heard in words ("${heard}")`);
      t.ok(
        rec.input.every((d, i) => d.startMs <= d.endMs && (i === 0 || d.startMs >= rec.input[i - 1]!.startMs)),
        'input words are timed in order',
      );
      t.ok(
        rec.input[0]!.startMs >= 100 && rec.input.at(-1)!.endMs <= 200 + question.length * 20 + 400,
        'on the audio timeline',
      );
      t.ok(rec.delegations[0]!.offsetMs >= rec.input.at(-1)!.endMs - 1, 'delegated at the end of speech');
      t.equal(rec.delegations[0]!.target, 'client');
      await waitFor(
        () =>
          rec.output.length > 0 &&
          rec.output
            .map((d) => d.text)
            .join(' ')
            .endsWith('month.'),
        'the answer spoken',
        20_000,
      );
      const said = rec.output.map((d) => d.text).join(' ');
      t.equal(said, 'The premium plan costs 4.99 euros per month.', 'the sentence that answers');
      t.ok(
        rec.output.every((d, i) => i === 0 || d.startMs >= rec.output[i - 1]!.startMs),
        'output words in order',
      );
      const frameBytes = (audio.sampleRateHz / 50) * (audio.format === 'pcm16' ? 2 : 1);
      t.ok(
        rec.audio.every((b) => b.length <= frameBytes),
        'audio in 20 ms frames of the call format',
      );
      const sent = Buffer.concat(rec.audio);
      const seconds = sent.length / (frameBytes * 50);
      t.ok(seconds > 2 && seconds < 6, `a sentence of speech (${seconds.toFixed(1)} s)`);
      if (audio.format === 'pcm16') {
        // Recognized back (the recognizer's model is 16 kHz; 8 kHz telephone audio is not recognized reliably).
        const answer = await hear(sent, audio);
        t.match(answer, /premium/, `the answer audio says it ("${answer}")`);
        t.match(answer, /euros/);
      } else {
        const linear = decodeFrame(sent, audio);
        let loud = 0;
        for (const s of linear) if (Math.abs(s) > 2000) loud++;
        t.ok(loud > linear.length / 20, 'G.711 speech, not silence');
      }
      const closed = await session.close();
      t.same(closed.reason, 'close_requested');
      t.equal(closed.usageFinal, true);
    },
  );
}

t.test('muted audio is not heard; unmuted is', async (t) => {
  const audio: VoiceAudioFormat = { format: 'pcm16', sampleRateHz: 24000 };
  const rec = new Recorder();
  const session = await provider().startSession({ audio, speechHints: DOCUMENT }, { handlers: rec });
  const question = framesOf(spoken(QUESTION, audio), audio);
  session.mute();
  send(session, [...question, ...silence(1000, audio)]);
  session.unmute();
  send(session, [...question, ...silence(1000, audio)]);
  await waitFor(() => rec.output.length > 0, 'the reply to the unmuted question', 20_000);
  const firstStart = rec.input[0]!.startMs;
  t.ok(firstStart >= question.length * 20 + 1000 - 300, 'only the unmuted question was heard');
  t.equal(
    rec.output.map((d) => d.text).join(' '),
    NO_DELEGATION_REPLY.split(' ').slice(0, rec.output.length).join(' '),
    'without delegation it says it cannot look things up',
  );
  await session.close();
});

t.test('commentary is spoken; the caller talking over it stops it at once; the next answer is spoken', async (t) => {
  const audio: VoiceAudioFormat = { format: 'pcmu', sampleRateHz: 8000 };
  const rec = new Recorder();
  const session = await provider().startSession({ audio }, { handlers: rec });
  session.appendCommentary(
    'We open at nine. We close at five. On Saturdays we open at ten and close at two in the afternoon.',
  );
  await waitFor(() => rec.audio.length >= 10, 'speech begins', 20_000);
  const question = framesOf(spoken(QUESTION, audio), audio);
  send(session, question.slice(0, 15)); // 300 ms of the caller's voice
  const atBargeIn = rec.audio.length;
  const wordsAtBargeIn = rec.output.length;
  await waitFor(() => rec.usage.length >= 6, 'time passes');
  t.ok(rec.audio.length - atBargeIn <= 1, 'no audio after the caller started talking');
  t.equal(rec.output.length, wordsAtBargeIn, 'no words reported that were not spoken');
  t.ok(rec.output.length < 20, 'the answer was cut short');
  // The next answer is spoken: a stopped answer does not hold up the ones after it.
  session.appendCommentary('We are closed on Sundays.');
  await waitFor(
    () =>
      rec.output
        .map((d) => d.text)
        .join(' ')
        .endsWith('Sundays.'),
    'the next answer spoken',
    20_000,
  );
  t.ok(rec.audio.length > atBargeIn + 10, 'with its audio');
  await session.close();
});

t.test('usage is cumulative; close is final and idempotent', async (t) => {
  const rec = new Recorder();
  const session = await provider().startSession({}, { handlers: rec });
  await waitFor(() => rec.usage.length >= 3, 'usage updates');
  t.ok(
    rec.usage.every((u, i) => i === 0 || u >= rec.usage[i - 1]!),
    'never decreases',
  );
  const closed = await session.close();
  t.equal(closed.reason, 'close_requested');
  t.ok(closed.usage.seconds >= rec.usage.at(-1)!);
  t.same(rec.closed, [closed], 'onClosed fires once');
  t.equal(rec.states.at(-1), 'closed');
  t.equal(session.sendAudio(Buffer.alloc(960)), false, 'no audio after close');
  t.equal(session.stats.audioFramesRefused, 1);
  t.equal(await session.close(), closed, 'close is idempotent');
});

t.test('an aborted start rejects', async (t) => {
  const controller = new AbortController();
  controller.abort();
  await t.rejects(provider().startSession({}, { signal: controller.signal }), { code: 'VOICE_PROVIDER_ABORTED' });
});
