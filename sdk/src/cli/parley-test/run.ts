/** parley-test's engine: starts a scenario run on the server, polls it to its end, and shapes the results. */
import { createParleyClient } from '../../client.js';
import { sleep } from '../../sleep.js';
import type { ParleyTestOptions } from './args.js';
import type { JunitCase } from './junit.js';

export interface ScenarioRunOutcome {
  runId: string;
  status: string;
  passRate: number | null;
  durationMs: number;
  cases: Array<JunitCase & { conversationId: string | null }>;
  figures: Record<string, unknown> | null;
}

const POLL_MS = 1000;

export async function runScenarioTests(
  o: ParleyTestOptions,
  hooks: { signal?: AbortSignal; onResult?: (c: JunitCase) => void } = {},
): Promise<ScenarioRunOutcome> {
  const client = createParleyClient({ baseUrl: o.url, apiKey: o.apiKey, onDeprecation: () => undefined });
  const path = { assistantId: o.assistantId };
  const started = performance.now();
  const { run } = await client.POST('/api/v1/assistants/{assistantId}/scenario-runs', {
    params: { path },
    body: { concurrency: o.concurrency, ...(o.scenarios.length > 0 ? { scenarios: o.scenarios } : {}) },
  });
  const reported = new Set<number>();
  const until = started + o.timeoutMs;
  for (;;) {
    const answer = await client.GET('/api/v1/assistants/{assistantId}/scenario-runs/{runId}', {
      params: { path: { ...path, runId: run.id } },
    });
    const cases = answer.results.map((r) => ({
      name: r.name,
      transport: r.transport,
      status: r.status,
      durationMs:
        r.startedAt !== null && r.finishedAt !== null ? Date.parse(r.finishedAt) - Date.parse(r.startedAt) : 0,
      verdicts: r.verdicts,
      error: r.error,
      conversationId: r.conversationId,
    }));
    answer.results.forEach((r, i) => {
      if (r.finishedAt !== null && !reported.has(r.index)) {
        reported.add(r.index);
        hooks.onResult?.(cases[i]!);
      }
    });
    if (answer.run.status !== 'running' || performance.now() > until || hooks.signal?.aborted)
      return {
        runId: run.id,
        status: answer.run.status === 'running' ? 'timed_out' : answer.run.status,
        passRate: answer.run.figures?.passRate ?? null,
        durationMs: performance.now() - started,
        cases,
        figures: answer.run.figures,
      };
    await sleep(POLL_MS, hooks.signal).catch(() => undefined);
  }
}

/** One line per verdict, as a person reads it in a CI log. */
export function verdictLines(c: JunitCase): string[] {
  const mark = c.status === 'passed' ? 'PASS' : c.status === 'failed' ? 'FAIL' : 'ERROR';
  const lines = [`${mark}  ${c.name} (${c.transport}, ${(c.durationMs / 1000).toFixed(1)} s)`];
  for (const v of c.verdicts)
    lines.push(`  ${v.passed ? 'ok  ' : 'FAIL'}  ${JSON.stringify(v.expectation)}: ${v.evidence}`);
  if (c.error !== null) lines.push(`  error: ${c.error}`);
  return lines;
}
