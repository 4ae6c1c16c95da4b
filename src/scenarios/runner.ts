import { getOwnedAssistant, type Assistant } from '../assistants/index.js';
import type { OwnerPrincipal } from '../auth/index.js';
import type { Sql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import { runChatScenario } from './chat-run.js';
import type { Observed, ScenarioDrivers } from './drivers.js';
import { ScenarioErrorCodes, scenarioErrors } from './errors.js';
import { judge, resultFigures, runFigures } from './judge.js';
import * as q from './queries.js';
import type { RunFigures } from './schemas.js';
import { newRunId } from './service.js';
import { runPhoneScenario } from './phone-run.js';
import { runVoiceScenario } from './voice-run.js';

/** What `scenario-run.completed` says (the webhooks capability sends it). */
export interface RunCompleted {
  accountId: string;
  runId: string;
  assistantId: string;
  status: 'done' | 'failed';
  scenarioCount: number;
  figures: RunFigures | null;
}

export interface ScenarioRunnerDeps {
  sql: Sql;
  log: Logger;
  drivers: ScenarioDrivers;
  onCompleted?: ((event: RunCompleted) => Promise<void>) | undefined;
}

export interface ScenarioRunner {
  start(
    owner: Pick<OwnerPrincipal, 'accountId'>,
    assistantId: string,
    selection: string[] | undefined,
    concurrency: number,
  ): Promise<ReturnType<typeof presentRun>>;
  list(owner: Pick<OwnerPrincipal, 'accountId'>, assistantId: string): Promise<Array<ReturnType<typeof presentRun>>>;
  get(
    owner: Pick<OwnerPrincipal, 'accountId'>,
    assistantId: string,
    runId: string,
  ): Promise<{ run: ReturnType<typeof presentRun>; results: Array<ReturnType<typeof presentResult>> }>;
  /** One scenario's latest results across runs (at most 20), newest first. */
  history(
    owner: Pick<OwnerPrincipal, 'accountId'>,
    assistantId: string,
    scenarioId: string,
  ): Promise<Array<ReturnType<typeof presentResult> & { runId: string; runCreatedAt: string }>>;
  /** Resolves once every run of this instance has finished (tests). */
  idle(): Promise<void>;
  /** Aborts the runs of this instance; each is marked failed (SCENARIO_RUN_INTERRUPTED). */
  stop(): Promise<void>;
}

export function presentRun(row: q.RunRow) {
  return {
    id: row.id,
    assistantId: row.assistantId,
    status: row.status,
    concurrency: row.concurrency,
    scenarioCount: row.scenarioCount,
    completedCount: row.completedCount,
    figures: row.figures,
    errorCode: row.errorCode,
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

export function presentResult(row: q.ResultRow) {
  return {
    index: row.ordinal,
    scenarioId: row.scenarioId,
    name: row.scenario.name,
    transport: row.scenario.transport,
    status: row.status,
    conversationId: row.conversationId,
    transcript: row.transcript,
    verdicts: row.verdicts,
    figures: row.figures,
    error: row.error,
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

/** Runs of one assistant running at once on one instance (each may hold several calls). */
export const MAX_ACTIVE_RUNS = 2;

/** How long an `analysis` expectation waits for the conversation's analysis. */
const ANALYSIS_WAIT_MS = 30_000;

/**
 * Runs execute on the instance that accepted them, at most `concurrency` scenarios at once, each result stored as
 * soon as it is judged. Not durable across a restart: a stopping instance marks its unfinished runs failed.
 */
export function createScenarioRunner(deps: ScenarioRunnerDeps): ScenarioRunner {
  const active = new Map<string, { assistantId: string; controller: AbortController; done: Promise<void> }>();

  async function runOne(assistant: Assistant, scenario: q.ScenarioFields, signal: AbortSignal) {
    const target = { accountId: assistant.accountId, assistantId: assistant.id };
    let observed: Observed;
    if (scenario.transport === 'chat') observed = await runChatScenario(deps.drivers, target, scenario, signal);
    else if (scenario.transport === 'websocket')
      observed = await runVoiceScenario(deps.drivers, target, scenario, signal);
    else observed = await runPhoneScenario(deps.drivers, target, scenario, signal);
    if (scenario.expect.some((e) => 'analysis' in e) && observed.conversationId && deps.drivers.analysisOf) {
      // A call is analysed once settled; a chat only once idle, so a chat scenario asks for its analysis now.
      if (scenario.transport === 'chat')
        await deps.drivers.requestAnalysis?.(assistant.accountId, observed.conversationId);
      const until = Date.now() + ANALYSIS_WAIT_MS;
      for (;;) {
        observed.analysis = await deps.drivers.analysisOf(assistant.accountId, observed.conversationId);
        if (observed.analysis || Date.now() > until || signal.aborted) break;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    return observed;
  }

  async function execute(run: { id: string; assistant: Assistant; concurrency: number }, signal: AbortSignal) {
    const log = deps.log.child({ scenarioRunId: run.id });
    const results = await q.listResults(deps.sql, run.id);
    let next = 0;
    const worker = async () => {
      while (next < results.length && !signal.aborted) {
        const result = results[next++]!;
        await q.startResult(deps.sql, run.id, result.ordinal);
        try {
          const observed = await runOne(run.assistant, result.scenario, signal);
          const verdicts = judge(result.scenario.expect, observed);
          await q.finishResult(deps.sql, run.id, result.ordinal, {
            status: verdicts.every((v) => v.passed) ? 'passed' : 'failed',
            conversationId: observed.conversationId,
            transcript: observed.transcript,
            verdicts,
            figures: resultFigures(observed),
            error: null,
          });
        } catch (err) {
          if (signal.aborted) return;
          log.warn({ err, ordinal: result.ordinal }, 'scenario could not be run');
          await q.finishResult(deps.sql, run.id, result.ordinal, {
            status: 'error',
            conversationId: null,
            transcript: [],
            verdicts: [],
            figures: {},
            error: err instanceof Error ? err.message.slice(0, 500) : 'The scenario could not be run.',
          });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(run.concurrency, results.length) }, worker));
    let completed: RunCompleted;
    if (signal.aborted) {
      await q.closeUnfinishedResults(deps.sql, run.id, 'The run was interrupted (the server stopped).');
      await q.finishRun(deps.sql, run.id, {
        status: 'failed',
        figures: null,
        errorCode: ScenarioErrorCodes.RUN_INTERRUPTED,
      });
      completed = { status: 'failed', figures: null } as RunCompleted;
    } else {
      const figures = runFigures(await q.listResults(deps.sql, run.id));
      await q.finishRun(deps.sql, run.id, { status: 'done', figures, errorCode: null });
      log.info({ passRate: figures.passRate, scenarios: results.length }, 'scenario run done');
      completed = { status: 'done', figures } as RunCompleted;
    }
    await deps
      .onCompleted?.({
        ...completed,
        accountId: run.assistant.accountId,
        runId: run.id,
        assistantId: run.assistant.id,
        scenarioCount: results.length,
      })
      .catch((err: unknown) => log.warn({ err }, 'scenario-run.completed not queued'));
  }

  return {
    async start(owner, assistantId, selection, concurrency) {
      const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
      const all = await q.listScenarios(deps.sql, assistant.id);
      const chosen =
        selection === undefined
          ? all
          : selection.map((key, i) => {
              const found = all.find((s) => s.id === key) ?? all.find((s) => s.name === key);
              if (!found) throw scenarioErrors.unknown(`scenarios.${i}`);
              return found;
            });
      if (chosen.length === 0) throw scenarioErrors.none();
      const running = [...active.values()].filter((a) => a.assistantId === assistant.id).length;
      if (running >= MAX_ACTIVE_RUNS) throw scenarioErrors.busy(MAX_ACTIVE_RUNS);
      const id = newRunId();
      await deps.sql.begin((tx) =>
        q.insertRun(tx, {
          id,
          assistantId: assistant.id,
          accountId: assistant.accountId,
          concurrency,
          scenarios: chosen,
        }),
      );
      const controller = new AbortController();
      const done = execute({ id, assistant, concurrency }, controller.signal)
        .catch((err: unknown) => deps.log.error({ err, scenarioRunId: id }, 'scenario run failed unexpectedly'))
        .finally(() => active.delete(id));
      active.set(id, { assistantId: assistant.id, controller, done });
      const row = await q.findRun(deps.sql, assistant.id, id);
      return presentRun(row!);
    },
    async list(owner, assistantId) {
      const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
      return (await q.listRuns(deps.sql, assistant.id, 50)).map(presentRun);
    },
    async get(owner, assistantId, runId) {
      const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
      const row = await q.findRun(deps.sql, assistant.id, runId);
      if (!row) throw scenarioErrors.runNotFound();
      return { run: presentRun(row), results: (await q.listResults(deps.sql, row.id)).map(presentResult) };
    },
    async history(owner, assistantId, scenarioId) {
      const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
      if (!(await q.findScenario(deps.sql, assistant.id, scenarioId))) throw scenarioErrors.notFound();
      return (await q.scenarioHistory(deps.sql, scenarioId, 20)).map((row) => ({
        ...presentResult(row),
        runId: row.runId,
        runCreatedAt: row.runCreatedAt.toISOString(),
      }));
    },
    async idle() {
      await Promise.all([...active.values()].map((a) => a.done));
    },
    async stop() {
      for (const a of active.values()) a.controller.abort();
      await Promise.all([...active.values()].map((a) => a.done));
    },
  };
}
