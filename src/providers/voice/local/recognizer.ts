import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalVoiceEngines, Pronunciations } from './engines.js';
import { sessionLanguageModel } from './language-model.js';
import { RECOGNIZER_RATE } from './audio.js';

/**
 * Recognition of one utterance: pocketsphinx reads the 16 kHz samples (a file in the session's directory) and prints the words with their times.
 * One short-lived process per utterance (it starts in well under 100 ms with a session's small model), never more
 * than `maxConcurrent` at once across the instance; each is killed if it runs past its deadline or the call ends.
 */
export interface RecognizedWord {
  word: string;
  /** Milliseconds from the start of the audio handed in. */
  startMs: number;
  endMs: number;
}

/** Silence around the utterance, so the recognizer's own voice detector sees it begin and end. */
const PAD_BEFORE_MS = 300;
const PAD_AFTER_MS = 700;

/** The model files of one session: its language model and the dictionary of the words it can say. */
export interface SessionModel {
  dir: string;
  lm: string;
  dict: string;
  dispose(): Promise<void>;
}

export async function prepareSessionModel(hint: string, words: Pronunciations): Promise<SessionModel> {
  const dir = await mkdtemp(join(tmpdir(), 'parley-voice-'));
  const arpa = sessionLanguageModel(hint, (w) => words.has(w));
  const vocabulary = new Set<string>();
  let section = '';
  for (const line of arpa.split('\n')) {
    if (line.startsWith('\\')) section = line;
    else if (section === '\\1-grams:' && line !== '') {
      const word = line.split(' ')[1]!;
      if (!word.startsWith('<')) vocabulary.add(word);
    }
  }
  const lm = join(dir, 'session.arpa');
  const dict = join(dir, 'session.dict');
  await Promise.all([writeFile(lm, arpa), writeFile(dict, words.linesFor(vocabulary))]);
  return { dir, lm, dict, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** Parses pocketsphinx's `-time yes` output: the hypothesis line, then `word start end confidence` lines. */
export function parseRecognition(stdout: string, offsetMs: number): RecognizedWord[] {
  const out: RecognizedWord[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^(\S+) (\d+\.\d+) (\d+\.\d+) \S+$/.exec(line.trim());
    if (!m) continue;
    const word = m[1]!.replace(/\(\d+\)$/, '');
    if (word.startsWith('<') || word.startsWith('[') || word.startsWith('+')) continue;
    out.push({
      word,
      startMs: Math.max(0, Math.round(Number(m[2]) * 1000) - offsetMs),
      endMs: Math.max(0, Math.round(Number(m[3]) * 1000) - offsetMs),
    });
  }
  return out;
}

/** Bounds the recognizer processes of the whole instance. */
export class ProcessLimiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly maxConcurrent: number,
    readonly maxWaiting: number,
  ) {}

  /** Runs `task` when a slot is free; rejects at once when too many wait already. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxConcurrent) {
      if (this.waiting.length >= this.maxWaiting) throw new Error('recognizer busy');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

export interface RecognizeOptions {
  engines: LocalVoiceEngines;
  /** The session's model; the utterance is written to a file in its directory (the recognizer reads files only). */
  model: Pick<SessionModel, 'dir' | 'lm' | 'dict'>;
  signal: AbortSignal;
  timeoutMs?: number;
}

let utteranceSeq = 0;

/** The words of one utterance (16 kHz PCM16LE), timed from its first sample. */
export async function recognizeUtterance(pcm16k: Buffer, options: RecognizeOptions): Promise<RecognizedWord[]> {
  // Waiting for a slot can outlast the call: nothing is started for a call that ended.
  if (options.signal.aborted) throw new Error('recognition aborted');
  const bytesPerMs = (RECOGNIZER_RATE * 2) / 1000;
  // Digital silence: measured better than a faint dither (55 % against 63 % WER, docs/local-voice.md).
  const pad = (ms: number): Buffer => Buffer.alloc(ms * bytesPerMs);

  const file = join(options.model.dir, `utterance-${++utteranceSeq}.raw`);
  await writeFile(file, Buffer.concat([pad(PAD_BEFORE_MS), pcm16k, pad(PAD_AFTER_MS)]));
  try {
    return await runRecognizer(file, options);
  } finally {
    await rm(file, { force: true });
  }
}

function runRecognizer(file: string, options: RecognizeOptions): Promise<RecognizedWord[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      options.engines.recognizer,
      [
        '-infile',
        file,
        '-logfn',
        '/dev/null',
        '-time',
        'yes',
        '-samprate',
        String(RECOGNIZER_RATE),
        // Its spectral noise subtraction eats the quiet edges of words: 55 % WER without it, 60 % with it (docs/local-voice.md).
        '-remove_noise',
        'no',
        '-hmm',
        options.engines.acousticModel,
        '-lm',
        options.model.lm,
        '-dict',
        options.model.dict,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let stdout = '';
    const stop = (): void => void child.kill('SIGKILL');
    const timer = setTimeout(stop, options.timeoutMs ?? 15_000);
    options.signal.addEventListener('abort', stop, { once: true });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => (stdout += s));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', stop);
      if (options.signal.aborted) reject(new Error('recognition aborted'));
      else if (code !== 0) reject(new Error(`recognizer exited with ${code}`));
      else resolve(parseRecognition(stdout, PAD_BEFORE_MS));
    });
  });
}
