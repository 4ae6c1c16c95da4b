import type { Observed } from './drivers.js';
import { findPhrase, isSubset } from './match.js';
import type { Expectation, ResultFigures, RunFigures, Verdict } from './schemas.js';

/** Evidence on one line, at most `max` characters. */
function clip(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Everything the assistant said (chat: its answers; voice: its own transcript of its speech), in order. */
export function assistantSpeech(observed: Observed): string {
  return observed.transcript
    .filter((e) => e.role === 'assistant')
    .map((e) => e.text)
    .join(' ');
}

/** What each side's recognizer heard of the other (voice), for evidence. */
function heardLine(observed: Observed): string {
  const of = (role: 'caller' | 'assistant') =>
    observed.transcript.filter((e) => e.role === role && e.heard !== undefined).map((e) => e.heard);
  const byAssistant = of('caller');
  const byCaller = of('assistant');
  return (
    (byAssistant.length > 0 ? ` (the assistant heard: "${clip(byAssistant.join(' / '), 200)}")` : '') +
    (byCaller.length > 0 ? ` (the caller heard: "${clip(byCaller.join(' / '), 200)}")` : '')
  );
}

function fieldOf(analysis: Record<string, unknown>, field: string): unknown {
  let value: unknown = analysis;
  for (const part of field.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    const record = value as Record<string, unknown>;
    // `structuredData` fields may be named directly.
    value = part in record ? record[part] : (record.structuredData as Record<string, unknown> | undefined)?.[part];
  }
  return value;
}

/** One verdict per expectation, each with the evidence it rests on. */
export function judge(expect: Expectation[], observed: Observed): Verdict[] {
  const said = assistantSpeech(observed);
  const heard = heardLine(observed);
  return expect.map((expectation): Verdict => {
    if ('mustSay' in expectation) {
      const found = findPhrase(said, expectation.mustSay);
      return found !== undefined
        ? { expectation, passed: true, evidence: `said "${clip(found, 120)}" in: "${clip(said)}"` }
        : { expectation, passed: false, evidence: `never said it; the assistant said: "${clip(said)}"${heard}` };
    }
    if ('neverSay' in expectation) {
      const found = findPhrase(said, expectation.neverSay);
      return found === undefined
        ? { expectation, passed: true, evidence: `not said; the assistant said: "${clip(said)}"` }
        : { expectation, passed: false, evidence: `said "${clip(found, 120)}" in: "${clip(said)}"${heard}` };
    }
    if ('toolCalled' in expectation) {
      const { name, arguments: args } = expectation.toolCalled;
      const calls = observed.toolCalls.filter((c) => c.name === name);
      const match = calls.find((c) => args === undefined || isSubset(args, c.arguments));
      const seen = observed.toolCalls.map(
        (c) => `${c.name}(${JSON.stringify(c.arguments)})${c.mocked ? ' [mocked]' : ''}`,
      );
      if (match)
        return { expectation, passed: true, evidence: `called ${name}(${clip(JSON.stringify(match.arguments), 200)})` };
      return {
        expectation,
        passed: false,
        evidence: seen.length === 0 ? 'no tool was called' : `tool calls: ${clip(seen.join(', '))}`,
      };
    }
    if ('endReason' in expectation) {
      const got = observed.endReason ?? 'none';
      return { expectation, passed: got === expectation.endReason, evidence: `the call ended: ${got}` };
    }
    if ('maxTurnLatencyMs' in expectation) {
      const worst = observed.turnLatenciesMs.length > 0 ? Math.max(...observed.turnLatenciesMs) : null;
      if (worst === null) return { expectation, passed: false, evidence: 'no turn was answered' };
      return {
        expectation,
        passed: worst <= expectation.maxTurnLatencyMs,
        evidence: `turn latencies ${observed.turnLatenciesMs.map(Math.round).join(', ')} ms (worst ${Math.round(worst)} ms)`,
      };
    }
    if ('maxFirstAudioMs' in expectation) {
      const first = observed.firstAudioMs;
      if (first === null) return { expectation, passed: false, evidence: 'no answer audio was heard' };
      return {
        expectation,
        passed: first <= expectation.maxFirstAudioMs,
        evidence: `first answer audio after ${Math.round(first)} ms`,
      };
    }
    if ('stopsWithinMs' in expectation) {
      const stops = observed.stopAfterInterruptMs;
      if (stops.length === 0) return { expectation, passed: false, evidence: 'no interrupt was measured' };
      const worst = Math.max(...stops);
      return {
        expectation,
        passed: worst <= expectation.stopsWithinMs,
        evidence: `answer audio stopped ${stops.map(Math.round).join(', ')} ms after the caller began talking over it`,
      };
    }
    const { field, equals } = expectation.analysis;
    if (!observed.analysis) return { expectation, passed: false, evidence: 'no completed post-call analysis' };
    const value = fieldOf(observed.analysis, field);
    return {
      expectation,
      passed: JSON.stringify(value) === JSON.stringify(equals),
      evidence: `analysis ${field} = ${clip(JSON.stringify(value) ?? 'undefined', 200)}`,
    };
  });
}

export function resultFigures(observed: Observed): ResultFigures {
  return {
    turnLatenciesMs: observed.turnLatenciesMs.map(Math.round),
    firstAudioMs: observed.firstAudioMs === null ? null : Math.round(observed.firstAudioMs),
    stopAfterInterruptMs: observed.stopAfterInterruptMs.map(Math.round),
    endReason: observed.endReason,
  };
}

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A run's pass rate and latency figures over its finished results. */
export function runFigures(results: Array<{ status: string; figures: ResultFigures }>): RunFigures {
  const passed = results.filter((r) => r.status === 'passed').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  const errored = results.filter((r) => r.status === 'error').length;
  const finished = passed + failed + errored;
  const turns = results.flatMap((r) => r.figures.turnLatenciesMs ?? []);
  const first = results.flatMap((r) => (r.figures.firstAudioMs == null ? [] : [r.figures.firstAudioMs]));
  const stops = results.flatMap((r) => r.figures.stopAfterInterruptMs ?? []);
  return {
    passRate: finished === 0 ? null : Math.round((passed / finished) * 10_000) / 10_000,
    passed,
    failed,
    errored,
    turnLatencyP50Ms: percentile(turns, 50),
    turnLatencyP95Ms: percentile(turns, 95),
    firstAudioP50Ms: percentile(first, 50),
    stopAfterInterruptP50Ms: percentile(stops, 50),
  };
}
