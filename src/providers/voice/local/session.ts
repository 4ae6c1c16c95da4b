import { randomUUID } from 'node:crypto';
import type { Logger } from '../../../log/index.js';
import { DEFAULT_AUDIO_FORMAT, type VoiceAudioFormat } from '../audio-format.js';
import { emptySessionStats } from '../types.js';
import type {
  VoiceLinkState,
  VoiceSession,
  VoiceSessionClosed,
  VoiceSessionConfig,
  VoiceSessionHandlers,
  VoiceSessionStats,
  VoiceUsage,
  VoiceBackendCommand,
} from '../types.js';
import { RECOGNIZER_RATE, Resampler, bytesOf, decodeFrame } from './audio.js';
import { spokenAnswer } from './answer.js';
import type { LocalVoiceEngines } from './engines.js';
import { recognizeUtterance, type ProcessLimiter, type SessionModel } from './recognizer.js';
import { Speaker } from './speaker.js';
import { LocalVoiceTools } from './tools.js';
import { EndOfSpeech, type LocalVoiceTuning } from './vad.js';

/** What every session of one local provider shares. */
export interface LocalSessionDeps {
  engines: LocalVoiceEngines;
  limiter: ProcessLimiter;
  tuning: Required<LocalVoiceTuning>;
  logger?: Logger | undefined;
}

/** Figures kept per session (the latest turns). */
const MAX_KEPT = 100;

/** Said when the session was opened without delegation: nothing can look the owner's documents up for it. */
export const NO_DELEGATION_REPLY = 'I can only answer from the documents, and I cannot look them up in this call.';

/**
 * One local call: caller audio -> voice detection -> recognition at each end of speech -> (delegated to Parley,
 * which grounds the question in the owner's documents) -> the answer spoken back. The same handlers as a hosted
 * session: timed input and output transcripts, output audio, delegations, cumulative usage, link state, closed.
 * Nothing here blocks: the recognizer and the synthesizer are child processes.
 */
export class LocalVoiceSession implements VoiceSession {
  readonly id = `sess_local_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  readonly lockConfirmed = true as const;
  state: VoiceLinkState = 'connected';
  usage: VoiceUsage = { seconds: 0 };
  readonly stats: VoiceSessionStats = emptySessionStats();
  /** Caller's end of speech to the first audio of its answer, per answered turn (ms; for the bench). */
  readonly answerLatenciesMs: number[] = [];
  /** Each heard utterance: its length and the words recognized in it (the latest ones). */
  readonly utterances: Array<{ audioMs: number; words: number }> = [];

  private readonly audio: VoiceAudioFormat;
  private readonly resampler: Resampler;
  private readonly detector: EndOfSpeech;
  private readonly startedAt = Date.now();
  private readonly abort = new AbortController();
  private readonly delegations = new Map<string, { question: string; endOfSpeechAt: number }>();
  private readonly usageTimer: NodeJS.Timeout;
  private speaker: Speaker | undefined;
  private speaking: Promise<void> = Promise.resolve();
  /** The last utterance's recognition, reported or failed: the next one is reported after it, in the order spoken. */
  private reported: Promise<void> = Promise.resolve();
  private muted = false;
  private closing: Promise<VoiceSessionClosed> | undefined;
  private readonly tools: LocalVoiceTools;
  /** When the caller stopped asking the question whose tool calls are being made (the answer's latency). */
  private toolQuestionAt: number | undefined;

  constructor(
    private readonly deps: LocalSessionDeps,
    private readonly config: VoiceSessionConfig,
    private readonly model: SessionModel,
    private readonly handlers: VoiceSessionHandlers = {},
    private readonly log: Logger | undefined = deps.logger,
  ) {
    this.audio = config.audio ?? DEFAULT_AUDIO_FORMAT;
    this.resampler = new Resampler(this.audio.sampleRateHz, RECOGNIZER_RATE);
    // The owner's turn taking (how long the caller must speak to cut in, the silence that ends a turn) over the defaults.
    const turn = config.turnTaking ?? {};
    const tuning = {
      ...deps.tuning,
      ...(turn.interruptAfterMs !== undefined ? { speechStartMs: turn.interruptAfterMs } : {}),
      ...(turn.endOfSpeechSilenceMs !== undefined ? { endOfSpeechMs: turn.endOfSpeechSilenceMs } : {}),
    };
    this.detector = new EndOfSpeech(tuning, {
      onSpeechStart: () => this.bargeIn(),
      onUtterance: (pcm, startMs, endMs) => this.heard(pcm, startMs, endMs),
    });
    this.tools = new LocalVoiceTools(config.tools);
    this.usageTimer = setInterval(() => this.reportUsage(), deps.tuning.usageIntervalMs);
    this.usageTimer.unref();
  }

  sendAudio(frame: Buffer): boolean {
    if (this.state !== 'connected') {
      this.stats.audioFramesRefused++;
      return false;
    }
    this.stats.audioFramesSent++;
    const samples = this.resampler.push(decodeFrame(frame, this.audio));
    if (this.muted) this.detector.skip(samples.length);
    else this.detector.push(samples);
    return true;
  }

  mute(): void {
    this.muted = true;
    this.detector.reset();
  }

  unmute(): void {
    this.muted = false;
  }

  /** Instructions shape a model's wording; the local voice quotes the documents, so there is nothing to apply. */
  appendInstructions(): void {}

  appendThinking(): void {}

  appendCommentary(text: string, delegationId?: string | null): void {
    if (this.state !== 'connected') return;
    const delegation = delegationId == null ? undefined : this.delegations.get(delegationId);
    if (delegation !== undefined && delegationId != null) this.delegations.delete(delegationId);
    const spoken = delegation === undefined ? text : spokenAnswer(text, delegation.question);
    if (delegation !== undefined) this.tools.said(spoken);
    this.say(spoken, delegation?.endOfSpeechAt);
  }

  /**
   * The outputs of the tool calls this session asked Parley to make; once all are in, their answer is spoken. An
   * async call's late result is spoken when it arrives, after whatever is being said (a call that ended says nothing).
   */
  sendToBackend(command: VoiceBackendCommand): void {
    if (this.state !== 'connected') return;
    const answer = this.tools.command(command);
    if (answer === undefined) return;
    this.say(answer, this.toolQuestionAt);
    // A late result answers no question just asked: it is no answer latency.
    this.toolQuestionAt = undefined;
  }

  close(): Promise<VoiceSessionClosed> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<VoiceSessionClosed> {
    this.state = 'closed';
    clearInterval(this.usageTimer);
    this.abort.abort();
    this.speaker?.stop();
    this.detector.reset();
    this.delegations.clear();
    this.updateUsage();
    await this.model.dispose().catch(() => undefined);
    const closed: VoiceSessionClosed = { reason: 'close_requested', usage: { ...this.usage }, usageFinal: true };
    this.handlers.onStateChange?.('closed');
    this.handlers.onClosed?.(closed);
    return closed;
  }

  private updateUsage(): void {
    this.usage = { seconds: Math.round((Date.now() - this.startedAt) / 100) / 10 };
  }

  private reportUsage(): void {
    if (this.state !== 'connected') return;
    this.updateUsage();
    this.handlers.onUsage?.({ ...this.usage });
  }

  /** The caller started talking: whatever the assistant is saying stops at once. */
  private bargeIn(): void {
    this.speaker?.stop();
  }

  /** One utterance ended: recognize it, report it, hand it over. */
  private heard(pcm: Int16Array, startMs: number, endMs: number): void {
    const endOfSpeechAt = Date.now();
    this.utterances.push({ audioMs: endMs - startMs, words: 0 });
    if (this.utterances.length > MAX_KEPT) this.utterances.shift();
    const record = this.utterances.at(-1)!;
    // Utterances are recognized side by side (a short one can finish first) and reported in the order they were
    // spoken: the caller's questions, their transcripts and the answers stay in the caller's order.
    const recognition = this.deps.limiter
      .run(() =>
        recognizeUtterance(bytesOf(pcm), { engines: this.deps.engines, model: this.model, signal: this.abort.signal }),
      )
      .then(
        (words) => ({ words, err: undefined }),
        (err: unknown) => ({ words: undefined, err: err as Error }),
      );
    this.reported = this.reported
      .then(() => recognition)
      .then(({ words, err }) => {
        if (this.state !== 'connected') return;
        if (err !== undefined) {
          this.log?.warn({ err: { message: err.message } }, 'recognition failed');
          return;
        }
        if (words === undefined || words.length === 0) return;
        record.words = words.length;
        for (const w of words) {
          const delta = { text: w.word, startMs: startMs + w.startMs, endMs: Math.min(endMs, startMs + w.endMs) };
          this.handlers.onInputTranscript?.({ ...delta, startMs: Math.min(delta.startMs, delta.endMs) });
        }
        this.answer(words.map((w) => w.word).join(' '), endMs, endOfSpeechAt);
      })
      .catch((err: unknown) => this.log?.warn({ err: { message: (err as Error).message } }, 'answering failed'));
  }

  private answer(question: string, offsetMs: number, endOfSpeechAt: number): void {
    if (this.askTools(question, endOfSpeechAt)) return;
    if (this.config.delegation?.type !== 'client') {
      this.say(NO_DELEGATION_REPLY, endOfSpeechAt);
      return;
    }
    const id = `deleg_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    this.delegations.set(id, { question, endOfSpeechAt });
    // An answer that never comes is forgotten (bounded memory); the caller can ask again.
    setTimeout(() => this.delegations.delete(id), this.deps.tuning.answerTimeoutMs).unref();
    this.handlers.onDelegation?.({ id, target: 'client', offsetMs });
  }

  /** A question one of the owner's tools answers (by its examples): its call is handed to Parley, or a value asked. */
  private askTools(question: string, endOfSpeechAt: number): boolean {
    const onFunctionCall = this.handlers.onFunctionCall;
    if (onFunctionCall === undefined) return false;
    const step = this.tools.step(question);
    if (step.kind === 'none') return false;
    if (step.kind === 'text') {
      this.say(step.text, endOfSpeechAt);
      return true;
    }
    this.toolQuestionAt = endOfSpeechAt;
    const responseId = `resp_${step.call.id}`;
    onFunctionCall({ callId: step.call.id, name: step.call.name, arguments: step.call.arguments, responseId });
    this.handlers.onBackendResponseDone?.(responseId);
    return true;
  }

  /** Speaks after whatever is being said now (answers never talk over each other). */
  private say(text: string, endOfSpeechAt?: number): void {
    this.speaking = this.speaking.then(async () => {
      if (this.state !== 'connected' || text.trim() === '') return;
      let first = true;
      const speaker = new Speaker({
        synthesizer: this.deps.engines.synthesizer,
        audio: this.audio,
        leadMs: this.deps.tuning.leadMs,
        voice: this.config.voice,
        speed: this.config.speed,
        now: () => Date.now(),
        onAudio: (frame) => {
          if (first && endOfSpeechAt !== undefined) {
            this.answerLatenciesMs.push(Date.now() - endOfSpeechAt);
            if (this.answerLatenciesMs.length > MAX_KEPT) this.answerLatenciesMs.shift();
          }
          first = false;
          this.stats.audioChunksReceived++;
          this.handlers.onOutputAudio?.(frame);
        },
        onWord: (word, start, end) =>
          this.handlers.onOutputTranscript?.({
            text: word,
            startMs: start - this.startedAt,
            endMs: end - this.startedAt,
          }),
        onDone: () => undefined,
      });
      this.speaker = speaker;
      try {
        await speaker.speak(text);
      } catch (err) {
        this.log?.warn({ err: { message: (err as Error).message } }, 'speech synthesis failed');
      } finally {
        if (this.speaker === speaker) this.speaker = undefined;
      }
    });
  }
}
