import { spawn, type ChildProcess } from 'node:child_process';
import type { VoiceAudioFormat } from '../audio-format.js';
import { bytesPerMs } from '../audio-format.js';
import { Resampler, encodeSamples, lowPass, samplesOf } from './audio.js';
import { sentencesToSpeak } from './answer.js';

/**
 * Speech out: espeak-ng makes each sentence (a WAV at 22 050 Hz on stdout, far faster than real time), the samples
 * are converted to the call's format and sent in 20 ms frames at the pace they play, a little ahead, so that when
 * the caller talks over the answer `stop()` silences it at once and nothing unsaid is left queued at the caller.
 * The next sentence is made while the current one plays. Words are reported as their audio goes out.
 */
export const SYNTH_RATE = 22050;
const WAV_HEADER_BYTES = 44;
const FRAME_MS = 20;

export interface SpeakerOptions {
  synthesizer: string;
  audio: VoiceAudioFormat;
  /** How far ahead of real time audio is sent (a caller's jitter buffer; also what is left to play after stop). */
  leadMs: number;
  voice?: string | undefined;
  /** Speaking rate, 1 = normal (espeak-ng's 165 words a minute). */
  speed?: number | undefined;
  now(): number;
  onAudio(frame: Buffer): void;
  /** A word as its audio starts going out, timed on `now()`'s timeline from `startedAt`. */
  onWord(text: string, startMs: number, endMs: number): void;
  /** All audio sent, or stopped. */
  onDone(stopped: boolean): void;
}

/** espeak-ng voice for a session's `voice` (hosted voice names mean nothing to it: the default then). */
function espeakVoice(voice: string | undefined): string {
  return voice !== undefined && /^[a-z]{2,3}(-[a-z0-9]+)?(\+[a-z0-9]+)?$/i.test(voice) ? voice : 'en-us';
}

/** One sentence as the call's audio, made by a child process killed on stop. */
function synthesize(
  text: string,
  options: SpeakerOptions,
  children: Set<ChildProcess>,
): Promise<{ frames: Buffer[]; ms: number }> {
  return new Promise((resolve, reject) => {
    const wordsPerMinute = String(Math.round(165 * (options.speed ?? 1)));
    const child = spawn(options.synthesizer, ['-v', espeakVoice(options.voice), '-s', wordsPerMinute, '--stdout'], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    children.add(child);
    const chunks: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => chunks.push(b));
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      children.delete(child);
      if (signal !== null || code !== 0) return reject(new Error(`synthesizer ended: ${signal ?? code}`));
      const wav = Buffer.concat(chunks);
      const rate = options.audio.sampleRateHz;
      const raw = samplesOf(wav.subarray(WAV_HEADER_BYTES));
      const samples = rate < SYNTH_RATE ? lowPass(raw, SYNTH_RATE, rate * 0.45) : raw;
      const resampled = new Resampler(SYNTH_RATE, options.audio.sampleRateHz).push(samples);
      const bytes = encodeSamples(resampled, options.audio);
      const frameBytes = FRAME_MS * bytesPerMs(options.audio);
      const frames: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += frameBytes) frames.push(bytes.subarray(at, at + frameBytes));
      resolve({ frames, ms: Math.round((resampled.length * 1000) / options.audio.sampleRateHz) });
    });
    child.stdin.end(text);
  });
}

export class Speaker {
  private readonly children = new Set<ChildProcess>();
  private timer: NodeJS.Timeout | undefined;
  /** Settles the sentence now playing: stop() must end it too, or `speak()` (and every answer after it) waits forever. */
  private settlePlaying: (() => void) | undefined;
  private stopped = false;
  private finished = false;
  /** Audio time already sent, and when the first frame went (the playout clock). */
  private sentMs = 0;
  private startedAt: number | undefined;

  constructor(private readonly options: SpeakerOptions) {}

  /** Speaks the text, sentence by sentence. Resolves when all of it was sent or it was stopped. */
  async speak(text: string): Promise<void> {
    const sentences = sentencesToSpeak(text);
    let next = sentences.length > 0 ? synthesize(sentences[0]!, this.options, this.children) : undefined;
    try {
      for (let i = 0; i < sentences.length && next !== undefined; i++) {
        const made = await next;
        if (this.stopped) break;
        // Make the next sentence while this one plays.
        next = i + 1 < sentences.length ? synthesize(sentences[i + 1]!, this.options, this.children) : undefined;
        next?.catch(() => undefined);
        await this.play(sentences[i]!, made);
        if (this.stopped) break;
      }
    } catch (err) {
      if (!this.stopped) throw err;
    } finally {
      this.finish();
    }
  }

  /** Silence now: no more frames, synthesis killed. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const child of this.children) child.kill('SIGKILL');
    this.children.clear();
    this.finish();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private finish(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.settlePlaying?.();
    this.settlePlaying = undefined;
    if (this.finished) return;
    this.finished = true;
    this.options.onDone(this.stopped);
  }

  /** Sends a sentence's frames at playout pace, `leadMs` ahead; its words when their share of the audio begins. */
  private play(sentence: string, made: { frames: Buffer[]; ms: number }): Promise<void> {
    const words = sentence.split(/\s+/).filter((w) => w.length > 0);
    const chars = words.reduce((n, w) => n + w.length + 1, 0);
    const sentenceStart = this.sentMs;
    let wordIndex = 0;
    let charsBefore = 0;
    let frameIndex = 0;
    this.startedAt ??= this.options.now();
    return new Promise<void>((settle) => {
      const resolve = (): void => {
        this.settlePlaying = undefined;
        settle();
      };
      this.settlePlaying = resolve;
      const pump = (): void => {
        this.timer = undefined;
        if (this.stopped) return resolve();
        const playedMs = this.options.now() - this.startedAt!;
        while (frameIndex < made.frames.length && this.sentMs < playedMs + this.options.leadMs) {
          const frameStart = this.sentMs - sentenceStart;
          while (wordIndex < words.length && (charsBefore / chars) * made.ms <= frameStart + FRAME_MS) {
            const word = words[wordIndex]!;
            const startMs = this.startedAt! + sentenceStart + Math.round((charsBefore / chars) * made.ms);
            charsBefore += word.length + 1;
            const endMs = this.startedAt! + sentenceStart + Math.round((charsBefore / chars) * made.ms);
            this.options.onWord(word, startMs, endMs);
            wordIndex++;
          }
          this.options.onAudio(made.frames[frameIndex++]!);
          this.sentMs += FRAME_MS;
        }
        if (frameIndex >= made.frames.length) {
          for (; wordIndex < words.length; wordIndex++) {
            const at = this.startedAt! + sentenceStart + made.ms;
            this.options.onWord(words[wordIndex]!, at, at);
          }
          // The sentence's last frame is a partial one: the timeline follows the audio, not the frame count.
          this.sentMs = sentenceStart + made.ms;
          return resolve();
        }
        this.timer = setTimeout(pump, FRAME_MS);
      };
      pump();
    });
  }
}

/** A text as the call's audio in 20 ms frames, made once (scenario runs' simulated callers speak with it). */
export function synthesizeSpeech(
  synthesizer: string,
  text: string,
  audio: VoiceAudioFormat,
): Promise<{ frames: Buffer[]; ms: number }> {
  const options: SpeakerOptions = {
    synthesizer,
    audio,
    leadMs: 0,
    now: () => 0,
    onAudio: () => undefined,
    onWord: () => undefined,
    onDone: () => undefined,
  };
  return synthesize(text, options, new Set());
}
