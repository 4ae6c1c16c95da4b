import { customAlphabet } from 'nanoid';
import { getOwnedAssistant, type Assistant } from '../assistants/index.js';
import type { OwnerPrincipal } from '../auth/principal.js';
import { buildMessages, TOP_K } from '../chat/index.js';
import type { Sql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import {
  assertEvalsAllowed,
  estimateTokens,
  readAccountPeriod,
  refusalError,
  type Meter,
  type Reservation,
} from '../metering/index.js';
import {
  ChatProviderError,
  type ChatProvider,
  type ChatProviderName,
  type ChatProviders,
} from '../providers/chat/index.js';
import { retrievePassages, sourcesOf } from '../retrieval/index.js';
import { evalErrors } from './errors.js';
import * as q from './queries.js';
import { factScore } from './facts.js';
import { judgeAnswer } from './judge.js';

export interface EvalDeps {
  sql: Sql;
  log: Logger;
  /** Every case is admitted (kind `eval`, source `dashboard`, not a request) and settled or released through it. */
  meter: Meter;
  /** The same provider set chat uses; the assistant's `settings.chatProvider` picks one. */
  providers: ChatProviders;
}

export interface EvalCaseInput {
  question: string;
  expected?: string | null | undefined;
}

/** At most this many cases per eval (docs/design-decisions.md, Owner REST). */
export const MAX_CASES = 50;

const idBody = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 20);

export function newEvalId(): string {
  return `eval_${idBody()}`;
}

/** The provider an assistant's chat uses (`default` = the deployment's CHAT_PROVIDER); undefined when not configured. */
export function selectProvider(
  providers: ChatProviders,
  assistant: Assistant,
): { name: ChatProviderName; provider: ChatProvider | undefined } {
  const name = assistant.settings.chatProvider === 'default' ? providers.defaultName : assistant.settings.chatProvider;
  return { name, provider: providers.get(name) };
}

/**
 * Queues an eval: the assistant must be the owner's (404 otherwise), the plan must include evals (enforce mode: 403
 * `plan_limit`), and its chat provider configured (503). The run happens in the background (src/evals/runner.ts);
 * each case is metered on its own when it runs.
 */
export async function createEval(
  deps: EvalDeps,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
  cases: EvalCaseInput[],
): Promise<q.EvalRow> {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  await assertEvalsAllowed(deps.meter, assistant.accountId, 'owner');
  const { name, provider } = selectProvider(deps.providers, assistant);
  if (!provider) throw evalErrors.providerNotConfigured(name);
  const id = newEvalId();
  const normalized = cases.map((c) => ({
    question: c.question,
    expected: c.expected == null || c.expected.trim() === '' ? null : c.expected,
  }));
  await deps.sql.begin((tx) =>
    q.insertEval(tx, { id, assistantId: assistant.id, accountId: assistant.accountId, cases: normalized }),
  );
  const row = await q.findEval(deps.sql, assistant.id, id);
  if (!row) throw new Error('eval vanished after insert');
  return row;
}

/**
 * Reading evals is also for plans with evals only (docs/design-decisions.md, Owner REST): in enforce mode a plan
 * without evals is 403 `plan_limit`, as at creation. A lock-free read (assertEvalsAllowed locks the account row for
 * admission; a dashboard polling an eval should not queue behind chat admissions).
 */
export async function assertEvalsReadable(meter: Meter, accountId: string): Promise<void> {
  if (meter.mode !== 'enforce') return;
  const account = await readAccountPeriod(
    meter.sql,
    accountId,
    meter.clock,
    meter.config.HOSTED_USAGE_DEFAULT_LIMIT_MICROS,
  );
  const plan = account?.plan;
  if (!plan?.evalsEnabled) throw refusalError({ kind: 'evals', planCode: plan?.planCode ?? 'free' }, 'owner');
}

/** An eval of one of the owner's assistants (either assistant id), with its cases in order. */
export async function getEval(
  deps: Pick<EvalDeps, 'sql' | 'meter'>,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
  evalId: string,
): Promise<{ eval: q.EvalRow; cases: q.CaseRow[] }> {
  const { sql } = deps;
  const assistant = await getOwnedAssistant(sql, owner, assistantId);
  await assertEvalsReadable(deps.meter, assistant.accountId);
  const row = await q.findEval(sql, assistant.id, evalId);
  if (!row) throw evalErrors.notFound();
  return { eval: row, cases: await q.listCases(sql, row.id) };
}

export function presentEval(row: q.EvalRow) {
  return {
    id: row.id,
    assistantId: row.assistantId,
    status: row.status,
    caseCount: row.caseCount,
    completedCount: row.completedCount,
    averageScore: row.averageScore === null ? null : Math.round(Number(row.averageScore) * 10_000) / 10_000,
    costMicros: row.costMicros,
    error: row.errorCode !== null ? { code: row.errorCode, message: row.error ?? '' } : null,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

export function presentCase(row: q.CaseRow) {
  return {
    index: row.ordinal,
    status: row.completedAt === null ? ('pending' as const) : ('done' as const),
    question: row.question,
    expected: row.expected,
    answer: row.answer,
    sources: row.sources,
    outcome: row.outcome,
    score: row.score,
    provider: row.provider,
    model: row.model,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    costMicros: row.costMicros,
    error: row.error,
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}

/** A case's run as the runner holds it: the eval's lease token fences every write. */
export interface CaseRun {
  evalId: string;
  leaseToken: string;
  assistant: Assistant;
  provider: ChatProvider;
  /** Aborted on shutdown or when the lease is lost. */
  signal: AbortSignal;
}

/** done: the result is stored; lost: another runner holds the eval now; interrupted: aborted, resume later. */
export type CaseRunResult = 'done' | 'lost' | 'interrupted';

/**
 * Runs one case like a chat turn (retrieval, the chat prompt, the assistant's provider) without storing a
 * conversation, then scores it. Metering, exactly one usage event per case: the case's reservation (kind `eval`)
 * is admitted and its id stored on the case before the provider call; an interrupted run leaves it open and the
 * resumed run settles that same reservation (a late settle if the usage sweeper expired it meanwhile). Closing
 * follows chat's rule: nothing reached the provider (could not connect) -> release; otherwise settle the tokens,
 * the local provider at 0 micros. A usage refusal (enforce mode) is thrown: the runner fails the eval.
 */
export async function runCase(deps: EvalDeps, run: CaseRun, c: q.PendingCase): Promise<CaseRunResult> {
  const { assistant, provider } = run;
  const passages = await retrievePassages(
    deps.sql,
    { id: assistant.id, language: assistant.settings.language },
    c.question,
    TOP_K,
  );
  const messages = buildMessages({
    instructions: assistant.instructions,
    passages,
    history: [],
    question: c.question,
    voiceUnavailable: false,
  });

  let reservation: Reservation | string | null = c.reservationId;
  if (reservation === null) {
    const admitted = await deps.meter.admit({
      accountId: assistant.accountId,
      kind: 'eval',
      source: 'dashboard',
      audience: 'owner',
      // Same estimate as chat (src/chat/meter.ts): the prompt priced exactly, the output at the ceiling; local is free.
      estimateMicros:
        provider.name === 'local'
          ? 0
          : deps.meter.estimateChat(
              provider.model,
              estimateTokens(messages.map((m) => m.content).join('\n'), messages.length),
            ),
      countsAsRequest: false,
      assistantId: assistant.id,
    });
    if (admitted.id !== null) {
      const id = admitted.id;
      const held = await deps.sql.begin(async (tx) => {
        if (!(await q.holdsLease(tx, run.evalId, run.leaseToken))) return false;
        await q.setCaseReservation(tx, run.evalId, c.ordinal, id);
        return true;
      });
      if (!held) {
        await deps.meter.release(admitted);
        return 'lost';
      }
    }
    reservation = admitted;
  }

  let answer = '';
  let usage: { inputTokens: number; outputTokens: number } | undefined;
  let error: ChatProviderError | undefined;
  try {
    for await (const event of provider.stream(
      {
        messages,
        passages: passages.map((p) => ({ documentName: p.documentName, heading: p.heading, content: p.content })),
        question: c.question,
        voiceUnavailable: false,
        maxOutputTokens: deps.meter.maxOutputTokens,
      },
      run.signal,
    )) {
      if (event.type === 'text') answer += event.text;
      else usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
    }
  } catch (err) {
    error =
      err instanceof ChatProviderError
        ? err
        : new ChatProviderError('interrupted', 'The provider failed.', { cause: err });
  }
  // Shutdown or a lost lease: the reservation stays open on the case for the resumed run to settle.
  if (run.signal.aborted || error?.failure === 'aborted') return 'interrupted';

  const failed = error !== undefined;
  // Scored by the facts of the expected answer; a hosted model, when it answers, is also asked to judge (judge.ts).
  const judged =
    !failed && c.expected !== null && provider.name !== 'local' && answer.trim() !== ''
      ? await judgeAnswer(provider, { question: c.question, expected: c.expected, answer }, run.signal)
      : undefined;
  if (run.signal.aborted) return 'interrupted';
  if (error)
    deps.log.warn(
      { evalId: run.evalId, case: c.ordinal, provider: provider.name, failure: error.failure, status: error.status },
      'eval case provider failed',
    );
  const inputTokens =
    (usage?.inputTokens ??
      (answer.length > 0 || failed ? Math.ceil(messages.reduce((n, m) => n + m.content.length, 0) / 4) : 0)) +
    (judged?.inputTokens ?? 0);
  const outputTokens = (usage?.outputTokens ?? Math.ceil(answer.length / 4)) + (judged?.outputTokens ?? 0);
  let costMicros = 0;
  if (error && answer.length === 0 && error.failure === 'connection') await deps.meter.release(reservation);
  else {
    const settled = await deps.meter.settle(
      reservation,
      provider.name === 'local'
        ? { actualMicros: 0, model: provider.model, inputTokens, outputTokens }
        : { model: provider.model, inputTokens, outputTokens },
    );
    costMicros = settled.costMicros;
  }

  const result: q.CaseResult = {
    answer,
    sources: failed ? [] : sourcesOf(passages, c.question),
    outcome: failed ? 'model_failure' : passages.length > 0 ? 'answered' : 'no_answer',
    // A failed answer is not scored (there is nothing comparable); neither is a case without an expected answer.
    score: failed || c.expected === null ? null : (judged?.score ?? factScore(answer, c.expected, c.question)),
    provider: provider.name,
    model: provider.model,
    inputTokens,
    outputTokens,
    costMicros,
    error: error ? `The AI provider could not answer (${error.failure}).` : null,
  };
  const stored = await deps.sql.begin(async (tx) => {
    if (!(await q.holdsLease(tx, run.evalId, run.leaseToken))) return false;
    await q.completeCase(tx, run.evalId, c.ordinal, result);
    return true;
  });
  return stored ? 'done' : 'lost';
}
