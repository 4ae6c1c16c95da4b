import type { Assistant } from '../assistants/index.js';

/** An assistant's analysis settings (its `settings.analysis`, defaults filled in). */
export type AnalysisSettings = Assistant['settings']['analysis'];
/** The owner's JSON Schema for structured data. */
export type AnalysisSchema = NonNullable<AnalysisSettings['structuredData']>['schema'];

/** One message of the conversation, oldest first, as the steps read it. */
export interface TranscriptMessage {
  role: 'user' | 'assistant';
  content: string;
  /** Chat answers: how retrieval went (no_answer: the documents did not answer); null for questions and voice. */
  outcome: 'answered' | 'no_answer' | 'model_failure' | null;
  at: Date;
}

export type StepName = 'summary' | 'structuredData' | 'successEvaluation' | 'sentiment';

/**
 * How one enabled step went: `ok` (its field holds the value), else the field is null and `reason` says why
 * (`skipped`: not run at all, as when the account's usage budget is used up).
 */
export interface StepRecord {
  step: StepName;
  status: 'ok' | 'failed' | 'timed_out' | 'skipped';
  reason: string | null;
  /** What was adjusted on the way (a structured value that did not validate and was dropped, a field not found). */
  notes: string[];
}

export interface SuccessVerdict {
  rubric: 'pass_fail' | 'score_1_10' | 'descriptive';
  /** pass_fail: true or false; score_1_10: 1 to 10; descriptive: a sentence. */
  verdict: boolean | number | string;
  rationale: string;
}

export interface SentimentResult {
  label: 'positive' | 'neutral' | 'negative';
  /** From -1 (negative) to 1 (positive). */
  score: number;
}

/** The stored analysis of one conversation. */
export interface AnalysisResult {
  /** local: patterns, quotes and word lists on this server, no language model; openai: the configured chat model. */
  engine: 'local' | 'openai';
  model: string;
  settingsVersion: string;
  summary: string | null;
  structuredData: Record<string, unknown> | null;
  successEvaluation: SuccessVerdict | null;
  sentiment: SentimentResult | null;
  steps: StepRecord[];
  /** What the run cost, metered as the assistant's chat usage (source `analysis`); 0 for the local engine. */
  costMicros?: number;
}

/** What an engine's step gives back: a value, or null with the reason; notes either way. */
export interface StepOutput<T> {
  value: T | null;
  reason?: string;
  notes?: string[];
}

/**
 * The seam between the steps and who performs them: the local engine (offline) and a hosted chat model, each step
 * given the conversation and its own deadline's signal.
 */
export interface AnalysisEngine {
  readonly name: 'local' | 'openai';
  readonly model: string;
  /** What the steps run so far cost (settled usage), in micros. */
  readonly costMicros: number;
  summary(transcript: TranscriptMessage[], signal: AbortSignal): Promise<StepOutput<string>>;
  /** The raw values found; the caller validates them against the schema. */
  structuredData(
    transcript: TranscriptMessage[],
    config: NonNullable<AnalysisSettings['structuredData']>,
    signal: AbortSignal,
  ): Promise<StepOutput<unknown>>;
  successEvaluation(
    transcript: TranscriptMessage[],
    config: NonNullable<AnalysisSettings['successEvaluation']>,
    signal: AbortSignal,
  ): Promise<StepOutput<SuccessVerdict>>;
  sentiment(transcript: TranscriptMessage[], signal: AbortSignal): Promise<StepOutput<SentimentResult>>;
}
