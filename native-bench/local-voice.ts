/**
 * The local voice, measured: word error rate of the recognizer on fixed espeak-ng sentences (with the general
 * English model, and with the per-session model built from the document the questions are about, as the
 * provider uses it), CPU per second of call, and the time from the caller's end of speech to the first answer
 * audio. Run: `npx tsx native-bench/local-voice.ts [--latency N]`. Needs pocketsphinx, pocketsphinx-en-us,
 * espeak-ng and sox. Figures go to docs/local-voice.md by hand, with the machine's load at the time.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import {
  createLocalVoiceProvider,
  findLocalVoiceEngines,
  type LocalVoiceSession,
  type VoiceAudioFormat,
} from '../src/providers/voice/index.js';
import { loadPronunciations } from '../src/providers/voice/local/engines.js';
import { spokenWords } from '../src/providers/voice/local/language-model.js';
import { prepareSessionModel, recognizeUtterance } from '../src/providers/voice/local/recognizer.js';

const DOCUMENT = `Acme Notes is a note taking service for small teams.
The premium plan costs 4.99 euros per month and includes unlimited notebooks.
The free plan allows three notebooks and one gigabyte of storage.
Our support team answers emails within two business days.
The office is open Monday to Friday from nine to five.
Notes are stored in data centres in Frankfurt and Dublin.
You can export every notebook as a PDF or as a text file.
To cancel your subscription, open the billing page and choose cancel.
Students get a discount of fifty percent on the premium plan.
The mobile app works on Android and on the iPhone.
Shared notebooks can have up to twenty members.
Every change is saved automatically and kept for thirty days.`;

/** What callers ask (about the document) and what they say; fixed, so runs compare. */
export const SENTENCES = [
  'How much does the premium plan cost',
  'What does the free plan include',
  'When is the office open',
  'Where are my notes stored',
  'How can I cancel my subscription',
  'Can I export my notebooks',
  'Do students get a discount',
  'Does the app work on Android',
  'How many members can a shared notebook have',
  'How long are changes kept',
  'How fast does the support team answer',
  'Is there a mobile app',
  'How much storage does the free plan have',
  'Can I export a notebook as a PDF',
  'What is the price per month',
  'Is the office open on Friday',
  'Tell me about the premium plan',
  'Are my notes saved automatically',
  'How many notebooks does the free plan allow',
  'Where are the data centres',
  'I would like to cancel my subscription',
  'Thank you goodbye',
  'Hello can you help me',
  'What is Acme Notes',
];

function wordErrors(ref: string[], hyp: string[]): number {
  const d = Array.from({ length: ref.length + 1 }, (_, i) => [i, ...Array<number>(hyp.length).fill(0)]);
  for (let j = 1; j <= hyp.length; j++) d[0]![j] = j;
  for (let i = 1; i <= ref.length; i++)
    for (let j = 1; j <= hyp.length; j++)
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1),
      );
  return d[ref.length]![hyp.length]!;
}

const found = findLocalVoiceEngines(process.env.PATH ?? '/usr/bin:/bin');
if (found.engines === undefined) throw new Error(`missing: ${found.missing.join(', ')}`);
const engines = found.engines;
const words = await loadPronunciations(engines.dictionary);

function speech(text: string, rate: number, encoding: string[] = ['-e', 'signed', '-b', '16']): Buffer {
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', text]);
  return execFileSync('sox', ['-t', 'wav', '-', '-t', 'raw', '-r', String(rate), '-c', '1', ...encoding, '-'], {
    input: wav,
  });
}

/** Children's CPU (user + system, ms) as the kernel counts it for this process (reaped children included). */
function childCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100; // cutime, cstime in 100 Hz ticks
}

async function wer(label: string, model: { dir: string; lm: string; dict: string }, rate = 16000): Promise<void> {
  let errors = 0;
  let total = 0;
  let audioMs = 0;
  // The speech is made first: espeak-ng and sox are children too, and must not count as the recognizer's CPU.
  const inputs = SENTENCES.map((sentence) => {
    const pcm = speech(sentence, rate);
    if (rate === 16000) return pcm;
    const up = [
      '-t',
      'raw',
      '-r',
      String(rate),
      '-c',
      '1',
      '-e',
      'signed',
      '-b',
      '16',
      '-',
      '-t',
      'raw',
      '-r',
      '16000',
      '-',
    ];
    return execFileSync('sox', up, { input: pcm });
  });
  const started = childCpuMs();
  for (const [i, sentence] of SENTENCES.entries()) {
    const pcm = inputs[i]!;
    audioMs += pcm.length / 32;
    const hyp = (await recognizeUtterance(pcm, { engines, model, signal: new AbortController().signal })).map(
      (w) => w.word,
    );
    const ref = spokenWords(sentence);
    errors += wordErrors(ref, hyp);
    if (process.argv.includes('--verbose')) console.log(`  ${ref.join(' ')} -> ${hyp.join(' ')}`);
    total += ref.length;
  }
  const cpu = childCpuMs() - started;
  console.log(
    `${label}: WER ${((100 * errors) / total).toFixed(1)} % (${errors}/${total} words, ${SENTENCES.length} sentences); recognizer CPU ${(cpu / (audioMs / 1000)).toFixed(0)} ms per second of speech`,
  );
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${(await import('node:os')).cpus().length} cores`,
);
const general = {
  dir: (await prepareSessionModel('', words)).dir,
  lm: `${engines.acousticModel}/../en-us.lm.bin`,
  dict: engines.dictionary,
};
await wer('general English model (en-us.lm.bin, 134k words)', general);
const session = await prepareSessionModel(DOCUMENT, words);
await wer('session model (the document + question phrases), what the provider uses', session);
await wer('session model, 8 kHz telephone audio upsampled', session, 8000);

// End of speech to first answer audio, through a whole provider session, audio paced in real time.
const latencyAt = process.argv.indexOf('--latency');
const latencyRuns = latencyAt < 0 ? 5 : Number(process.argv[latencyAt + 1]);
const provider = createLocalVoiceProvider({ kind: 'local', engines });
const audio: VoiceAudioFormat = { format: 'pcm16', sampleRateHz: 24000 };
const latencies: number[] = [];
let callMs = 0;
const questions = SENTENCES.slice(0, latencyRuns).map((sentence) =>
  Buffer.concat([speech(sentence, 24000), Buffer.alloc(48 * 2000)]),
);
const cpuBefore = childCpuMs();
const ownBefore = process.cpuUsage();
for (const pcm of questions) {
  let firstAudioAt = 0;
  let s!: LocalVoiceSession;
  s = (await provider.startSession(
    { audio, speechHints: DOCUMENT, delegation: { type: 'client' } },
    {
      handlers: {
        onDelegation: (r) => s.appendCommentary(DOCUMENT, r.id),
        onOutputAudio: () => (firstAudioAt ||= Date.now()),
      },
    },
  )) as LocalVoiceSession;
  const began = Date.now();
  const speechEndsAt = began + (pcm.length / 48 - 2000);
  for (let at = 0; at < pcm.length; at += 960) {
    s.sendAudio(pcm.subarray(at, at + 960));
    const due = began + (at + 960) / 48;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    if (firstAudioAt !== 0) break;
  }
  while (firstAudioAt === 0 && Date.now() - began < 20_000) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 3000)); // let the answer play: synthesis counts too
  callMs += Date.now() - began;
  if (firstAudioAt !== 0) latencies.push(firstAudioAt - speechEndsAt);
  await s.close();
}
const own = process.cpuUsage(ownBefore);
const cpuMs = childCpuMs() - cpuBefore + (own.user + own.system) / 1000;
if (questions.length > 0) {
  latencies.sort((a, b) => a - b);
  console.log(
    `end of speech -> first answer audio (${latencies.length} calls, real-time audio, end-of-speech silence 600 ms included): median ${Math.round(latencies[Math.floor(latencies.length / 2)]!)} ms, max ${Math.round(latencies.at(-1)!)} ms`,
  );
  console.log(
    `CPU per call-second (recognizer + synthesizer + Parley's process, ${(callMs / 1000).toFixed(0)} s of calls): ${(cpuMs / (callMs / 1000)).toFixed(0)} ms, i.e. about ${Math.floor(1000 / (cpuMs / (callMs / 1000)))} calls per core`,
  );
}
await session.dispose();
await rm(general.dir, { recursive: true, force: true });
