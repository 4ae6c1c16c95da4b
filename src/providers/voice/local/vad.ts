import { RECOGNIZER_RATE, rms } from './audio.js';

/** The local provider's knobs. Defaults are the production values (docs/local-voice.md says how they were chosen). */
export interface LocalVoiceTuning {
  /** RMS level (of 32 768) above which a 10 ms block counts as voiced. */
  speechThreshold?: number;
  /** Voiced time that starts an utterance (and stops the assistant talking: barge-in). */
  speechStartMs?: number;
  /** Silence that ends an utterance. */
  endOfSpeechMs?: number;
  /** An utterance is cut and recognized at this length even if the caller goes on. */
  maxUtteranceMs?: number;
  /** Audio kept from before the speech started (the first consonant is quiet). */
  prerollMs?: number;
  /** Shorter voiced bursts (a cough, a click) are not recognized. */
  minUtteranceMs?: number;
  usageIntervalMs?: number;
  /** How far ahead of real time answer audio is sent. */
  leadMs?: number;
  /** A delegated question whose answer has not come within this is forgotten. */
  answerTimeoutMs?: number;
  /** Recognizer processes at once across the instance, and how many utterances may wait for one. */
  maxConcurrentRecognitions?: number;
  maxWaitingRecognitions?: number;
}

export const LOCAL_VOICE_DEFAULTS: Required<LocalVoiceTuning> = Object.freeze({
  speechThreshold: 500,
  speechStartMs: 60,
  endOfSpeechMs: 600,
  maxUtteranceMs: 15_000,
  prerollMs: 300,
  minUtteranceMs: 200,
  usageIntervalMs: 1000,
  leadMs: 200,
  answerTimeoutMs: 15_000,
  maxConcurrentRecognitions: 4,
  maxWaitingRecognitions: 64,
});

const BLOCK = RECOGNIZER_RATE / 100; // 10 ms

/**
 * Energy voice detection on the 16 kHz stream: an utterance starts after `speechStartMs` of voiced blocks (with
 * `prerollMs` of what came before) and ends after `endOfSpeechMs` of unvoiced ones; times are milliseconds of
 * caller audio since the session started.
 */
export class EndOfSpeech {
  private position = 0;
  private pending: number[] = [];
  private preroll: Int16Array[] = [];
  private speech: Int16Array[] | undefined;
  private startMs = 0;
  /** Blocks of the utterance that came before its voice was confirmed (pre-roll and the starting voice). */
  private leadBlocks = 0;
  private voicedRun = 0;
  private silentRun = 0;

  constructor(
    private readonly tuning: Required<LocalVoiceTuning>,
    private readonly on: {
      onSpeechStart(): void;
      onUtterance(pcm: Int16Array, startMs: number, endMs: number): void;
    },
  ) {}

  /** Audio not listened to (muted) still moves the timeline. */
  skip(samples: number): void {
    this.position += samples;
  }

  reset(): void {
    this.pending = [];
    this.preroll = [];
    this.speech = undefined;
    this.voicedRun = this.silentRun = 0;
  }

  push(samples: Int16Array): void {
    for (const s of samples) this.pending.push(s);
    while (this.pending.length >= BLOCK) {
      const block = Int16Array.from(this.pending.splice(0, BLOCK));
      this.position += BLOCK;
      this.block(block, rms(block) >= this.tuning.speechThreshold);
    }
  }

  private get nowMs(): number {
    return Math.round((this.position * 1000) / RECOGNIZER_RATE);
  }

  private block(block: Int16Array, voiced: boolean): void {
    if (this.speech === undefined) {
      this.preroll.push(block);
      const keep = Math.ceil((this.tuning.prerollMs + this.tuning.speechStartMs) / 10);
      if (this.preroll.length > keep) this.preroll.shift();
      this.voicedRun = voiced ? this.voicedRun + 10 : 0;
      if (this.voicedRun < this.tuning.speechStartMs) return;
      this.speech = this.preroll;
      this.leadBlocks = this.speech.length;
      this.preroll = [];
      this.startMs = this.nowMs - this.speech.length * 10;
      this.silentRun = 0;
      this.on.onSpeechStart();
      return;
    }
    this.speech.push(block);
    this.silentRun = voiced ? 0 : this.silentRun + 10;
    const length = this.speech.length * 10;
    if (this.silentRun < this.tuning.endOfSpeechMs && length < this.tuning.maxUtteranceMs) return;
    const speech = this.speech;
    this.speech = undefined;
    this.voicedRun = 0;
    // Trailing silence beyond a short tail is not speech.
    const silent = this.silentRun;
    this.silentRun = 0;
    const keep = Math.max(0, speech.length - Math.max(0, silent - 200) / 10);
    const voicedMs = length - this.leadBlocks * 10 + this.tuning.speechStartMs - silent;
    if (voicedMs < this.tuning.minUtteranceMs) return;
    const pcm = new Int16Array(keep * BLOCK);
    for (let i = 0; i < keep; i++) pcm.set(speech[i]!, i * BLOCK);
    this.on.onUtterance(pcm, this.startMs, this.startMs + keep * 10);
  }
}
