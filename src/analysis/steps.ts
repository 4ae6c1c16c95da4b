import { createHash } from 'node:crypto';
import { checkStructuredData } from './schema-check.js';
import type {
  AnalysisEngine,
  AnalysisResult,
  AnalysisSettings,
  StepName,
  StepOutput,
  StepRecord,
  TranscriptMessage,
} from './types.js';

/** Whether the settings turn on any step (otherwise nothing is queued). */
export function hasAnyStep(settings: AnalysisSettings): boolean {
  return (
    settings.summary || settings.sentiment || settings.structuredData !== null || settings.successEvaluation !== null
  );
}

/** A digest of the analysis settings: a conversation is analysed automatically once per trigger and version. */
export function settingsVersion(settings: AnalysisSettings): string {
  const canonical = (value: unknown): unknown =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
        )
      : Array.isArray(value)
        ? value.map(canonical)
        : value;
  return createHash('sha256')
    .update(JSON.stringify(canonical(settings)))
    .digest('hex')
    .slice(0, 16);
}

/** Thrown when the worker is stopping: the analysis is given back to the queue, not stored. */
export class AnalysisAbandoned extends Error {}

/** Thrown by an engine that will not run a step (the account's budget is used up): the step is `skipped`. */
export class StepSkipped extends Error {}

/** Runs one step under its deadline. A step that throws or runs past it leaves null with the reason. */
async function runStep<T>(
  step: StepName,
  timeoutMs: number,
  outer: AbortSignal,
  run: (signal: AbortSignal) => Promise<StepOutput<T>>,
): Promise<{ value: T | null; record: StepRecord }> {
  const deadline = new AbortController();
  const signal = AbortSignal.any([outer, deadline.signal]);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      deadline.abort();
      resolve('timeout');
    }, timeoutMs);
  });
  try {
    const running = run(signal);
    // Past its deadline the step is no longer awaited: its late failure must not surface as an unhandled rejection.
    running.catch(() => undefined);
    const out = await Promise.race([running, timedOut]);
    if (outer.aborted) throw new AnalysisAbandoned('stopping');
    if (out === 'timeout') {
      return {
        value: null,
        record: { step, status: 'timed_out', reason: `the step did not finish within ${timeoutMs} ms`, notes: [] },
      };
    }
    const notes = out.notes ?? [];
    if (out.value === null) {
      return { value: null, record: { step, status: 'failed', reason: out.reason ?? 'nothing was found', notes } };
    }
    return { value: out.value, record: { step, status: 'ok', reason: null, notes } };
  } catch (err) {
    if (outer.aborted || err instanceof AnalysisAbandoned) throw new AnalysisAbandoned('stopping');
    if (err instanceof StepSkipped)
      return { value: null, record: { step, status: 'skipped', reason: err.message, notes: [] } };
    if (deadline.signal.aborted) {
      return {
        value: null,
        record: { step, status: 'timed_out', reason: `the step did not finish within ${timeoutMs} ms`, notes: [] },
      };
    }
    return { value: null, record: { step, status: 'failed', reason: (err as Error).message, notes: [] } };
  } finally {
    clearTimeout(timer);
  }
}

/** Every enabled step, one after the other, each under `settings.timeoutMs`. */
export async function analyse(
  engine: AnalysisEngine,
  transcript: TranscriptMessage[],
  settings: AnalysisSettings,
  signal: AbortSignal,
): Promise<AnalysisResult> {
  const result: AnalysisResult = {
    engine: engine.name,
    model: engine.model,
    settingsVersion: settingsVersion(settings),
    summary: null,
    structuredData: null,
    successEvaluation: null,
    sentiment: null,
    steps: [],
  };
  const timeout = settings.timeoutMs;
  if (settings.summary) {
    const { value, record } = await runStep('summary', timeout, signal, (s) => engine.summary(transcript, s));
    result.summary = value;
    result.steps.push(record);
  }
  const data = settings.structuredData;
  if (data !== null) {
    const { value, record } = await runStep('structuredData', timeout, signal, async (s) => {
      const raw = await engine.structuredData(transcript, data, s);
      if (raw.value === null) return { value: null, ...(raw.reason ? { reason: raw.reason } : {}) };
      const checked = checkStructuredData(data.schema, raw.value);
      return { value: checked.value, notes: [...(raw.notes ?? []), ...checked.notes] };
    });
    result.structuredData = value;
    result.steps.push(record);
  }
  const success = settings.successEvaluation;
  if (success !== null) {
    const { value, record } = await runStep('successEvaluation', timeout, signal, (s) =>
      engine.successEvaluation(transcript, success, s),
    );
    result.successEvaluation = value;
    result.steps.push(record);
  }
  if (settings.sentiment) {
    const { value, record } = await runStep('sentiment', timeout, signal, (s) => engine.sentiment(transcript, s));
    result.sentiment = value;
    result.steps.push(record);
  }
  result.costMicros = engine.costMicros;
  return result;
}
