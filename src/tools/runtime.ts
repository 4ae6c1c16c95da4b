import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../db/index.js';
import type { AddressPolicy, LookupAll } from '../documents/index.js';
import type { SecretBox } from '../webhooks/index.js';
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
}): ToolRuntime {
  const envOf = (assistantId: string) => ({
    secrets: () => signingSecrets(deps, assistantId),
    policy: deps.policy,
    lookup: deps.lookup,
  });
  const call: ToolRuntime['call'] = (tool, id, args, context) =>
    callTool(envOf(tool.assistantId), tool, id, args, context);
  return {
    toolsOf: (assistantId) => q.listTools(deps.sql, assistantId),
    newCallId: newToolCallId,
    call,
    async callWithRetries(tool, id, args, context) {
      const backoff = deps.backoffMs ?? ASYNC_BACKOFF_MS;
      let outcome = await call(tool, id, args, context);
      for (let attempt = 1; attempt < ASYNC_ATTEMPTS && isRetryable(outcome); attempt++) {
        await sleep(backoff[attempt - 1] ?? backoff.at(-1) ?? 1_000);
        outcome = await call(tool, id, args, context);
      }
      return outcome;
    },
  };
}
