import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../db/index.js';
import type { AddressPolicy, LookupAll } from '../documents/index.js';
import { enqueueEvent, type SecretBox } from '../webhooks/index.js';
import type { Logger } from '../log/index.js';
import { callTool, type ToolCallContext, type ToolOutcome } from './caller.js';
import * as q from './queries.js';
import { newToolCallId, signingSecrets } from './service.js';

export type { ToolCallContext, ToolOutcome } from './caller.js';
export type RuntimeTool = q.ToolRow;

/** What chat (and later voice) uses to offer an assistant's tools and call them. */
export interface ToolRuntime {
  /** The assistant's tools (an empty list when it has none: nothing is offered to the model). */
  toolsOf(assistantId: string): Promise<RuntimeTool[]>;
  /** A new tool call id (`tcall_...`): the request's `webhook-id`. */
  newCallId(): string;
  /** One attempt, never retried (sync tools: a retry could repeat a side effect). */
  call(tool: RuntimeTool, toolCallId: string, args: unknown, context: ToolCallContext): Promise<ToolOutcome>;
  /**
   * An async tool's call: up to {@link ASYNC_ATTEMPTS} attempts with the same `webhook-id` while the receiver cannot
   * be reached, times out or answers 5xx/429 (the owner deduplicates on the id). Resolves with the last outcome.
   */
  callWithRetries(tool: RuntimeTool, toolCallId: string, args: unknown, context: ToolCallContext): Promise<ToolOutcome>;
}

export const ASYNC_ATTEMPTS = 3;
const ASYNC_BACKOFF_MS = [1_000, 5_000];

function isRetryable(outcome: ToolOutcome): boolean {
  if (outcome.status === 'succeeded' || !outcome.sent) return false;
  const error = outcome.error ?? '';
  return /^(no answer|network error)/.test(error) || /HTTP (5\d\d|429)$/.test(error);
}

export function createToolRuntime(deps: {
  sql: Sql;
  secrets: SecretBox;
  policy: AddressPolicy;
  lookup?: LookupAll | undefined;
  /** Waits between async attempts (tests shorten them). */
  backoffMs?: readonly number[];
  log?: Logger | undefined;
}): ToolRuntime {
  const envOf = (assistantId: string) => ({
    secrets: () => signingSecrets(deps, assistantId),
    policy: deps.policy,
    lookup: deps.lookup,
  });
  const attempt = (tool: RuntimeTool, id: string, args: unknown, context: ToolCallContext) =>
    callTool(envOf(tool.assistantId), tool, id, args, context);
  const call: ToolRuntime['call'] = async (tool, id, args, context) =>
    reported(tool, id, context, await attempt(tool, id, args, context));
  /** A failed call is a `tool.failed` event for the owner (not invalid arguments: the model's mistake, never sent). */
  const reported = (tool: RuntimeTool, id: string, context: ToolCallContext, outcome: ToolOutcome): ToolOutcome => {
    if (outcome.status === 'failed' && !(outcome.error ?? '').startsWith('invalid arguments'))
      void queueFailure(tool, id, context, outcome).catch((err: unknown) =>
        deps.log?.error({ err, tool: tool.name }, 'tool.failed not queued'),
      );
    return outcome;
  };
  const queueFailure = async (tool: RuntimeTool, id: string, context: ToolCallContext, outcome: ToolOutcome) => {
    const accountId = await q.accountOfAssistant(deps.sql, tool.assistantId);
    if (accountId === undefined) return;
    await enqueueEvent(deps.sql, accountId, 'tool.failed', {
      toolCallId: id,
      toolId: tool.id,
      tool: tool.name,
      assistantId: tool.assistantId,
      conversationId: context.conversationId,
      ...(context.sessionId !== undefined ? { sessionId: context.sessionId } : {}),
      source: context.source,
      error: outcome.error ?? 'failed',
      durationMs: outcome.durationMs,
    });
  };
  return {
    toolsOf: (assistantId) => q.listTools(deps.sql, assistantId),
    newCallId: newToolCallId,
    call,
    async callWithRetries(tool, id, args, context) {
      const backoff = deps.backoffMs ?? ASYNC_BACKOFF_MS;
      let outcome = await attempt(tool, id, args, context);
      for (let n = 1; n < ASYNC_ATTEMPTS && isRetryable(outcome); n++) {
        await sleep(backoff[n - 1] ?? backoff.at(-1) ?? 1_000);
        outcome = await attempt(tool, id, args, context);
      }
      return reported(tool, id, context, outcome);
    },
  };
}
