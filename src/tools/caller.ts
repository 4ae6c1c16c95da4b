import { lookup as dnsLookup } from 'node:dns/promises';
import { request, type Agent } from 'undici';
import {
  GuardedFetchError,
  parseFetchableUrl,
  pinnedAgent,
  resolveAllowed,
  type AddressPolicy,
  type LookupAll,
} from '../documents/index.js';
import { signatureHeader } from '../webhooks/index.js';
import { argumentIssues } from './json-schema.js';
import type { ToolRow } from './queries.js';

/** The most of a tool's answer that is read: a larger answer is a failed call. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** Who a tool call is made for: part of the signed body (`call`), so the owner's server knows the context. */
export interface ToolCallContext {
  conversationId: string;
  assistantId: string;
  source: string;
  sessionId?: string | undefined;
  transport?: string | undefined;
  /** The last few turns of the conversation (the body's `messages`). */
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
}

/** What one tool call came to. `sent`: a request left for the owner's server (false for refused arguments). */
export interface ToolOutcome {
  status: 'succeeded' | 'failed';
  result?: unknown;
  /** Owner- and model-facing, short: never a response body beyond the tool's own `error`, never a secret. */
  error?: string;
  durationMs: number;
  sent: boolean;
}

export interface CallerEnv {
  /** The assistant's signing secrets in use now (the current one, and the previous one during its overlap). */
  secrets: () => Promise<string[]>;
  policy: AddressPolicy;
  lookup?: LookupAll | undefined;
}

const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Turns beyond this many are left out of the body's `messages`. */
const CONTEXT_TURNS = 6;

/**
 * Makes one tool call: the arguments are checked against the tool's schema first (an invalid call never reaches the
 * owner), then one signed POST (Standard Webhooks headers, `webhook-id` = the tool call id) through the address
 * policy, pinned to the checked address, redirects not followed, bounded by the tool's timeout and
 * {@link MAX_RESPONSE_BYTES}. A 2xx JSON `{ result }` succeeds; `{ error }`, another status, no answer or an unreadable
 * answer fails. One attempt: the caller decides about retries (sync tools never; a retry could repeat a side effect).
 */
export async function callTool(
  env: CallerEnv,
  tool: Pick<ToolRow, 'name' | 'parameters' | 'url' | 'timeoutMs'>,
  toolCallId: string,
  args: unknown,
  context: ToolCallContext,
): Promise<ToolOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const issues = argumentIssues(args, tool.parameters);
  if (issues.length > 0) {
    const text = issues
      .slice(0, 3)
      .map((i) => `${i.path} ${i.message}`)
      .join('; ');
    return { status: 'failed', error: `invalid arguments: ${text}`, durationMs: elapsed(), sent: false };
  }
  const body = JSON.stringify({
    type: 'tool.call',
    toolCallId,
    tool: tool.name,
    arguments: args,
    call: {
      ...(context.sessionId !== undefined ? { sessionId: context.sessionId } : {}),
      conversationId: context.conversationId,
      assistantId: context.assistantId,
      source: context.source,
      ...(context.transport !== undefined ? { transport: context.transport } : {}),
    },
    messages: context.messages.slice(-CONTEXT_TURNS),
  });
  let secrets: string[];
  try {
    secrets = await env.secrets();
  } catch {
    return { status: 'failed', error: 'the tool secret cannot be read; rotate it', durationMs: elapsed(), sent: false };
  }
  const deadline = AbortSignal.timeout(tool.timeoutMs);
  let agent: Agent | undefined;
  try {
    const url = parseFetchableUrl(tool.url);
    const { address, family } = await resolveAllowed(url, env.policy, env.lookup ?? defaultLookup);
    agent = pinnedAgent(address, family, tool.timeoutMs);
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signatureHeader(secrets, toolCallId, timestamp, body);
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      signal: deadline,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'user-agent': 'Parley-Tools/1.0',
        'webhook-id': toolCallId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      },
      body,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        return failed(`the answer is larger than ${MAX_RESPONSE_BYTES / 1024} KB`);
      }
      chunks.push(chunk);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) return failed(`the tool answered HTTP ${res.statusCode}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return failed('the answer is not JSON');
    }
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed && parsed.error !== undefined) {
      const error = (parsed as { error: unknown }).error;
      return failed(
        `the tool reported an error: ${(typeof error === 'string' ? error : JSON.stringify(error)).slice(0, 500)}`,
      );
    }
    if (typeof parsed !== 'object' || parsed === null || !('result' in parsed))
      return failed('the answer has neither result nor error');
    return { status: 'succeeded', result: (parsed as { result: unknown }).result, durationMs: elapsed(), sent: true };
  } catch (err) {
    if (err instanceof GuardedFetchError)
      return { status: 'failed', error: err.message, durationMs: elapsed(), sent: false };
    if (deadline.aborted) return failed(`no answer within ${Math.round(tool.timeoutMs / 100) / 10} s`);
    const code = (err as { code?: string }).code;
    return failed(code ? `network error (${code})` : 'network error');
  } finally {
    if (agent) void agent.close().catch(() => undefined);
  }

  function failed(error: string): ToolOutcome {
    return { status: 'failed', error, durationMs: elapsed(), sent: true };
  }
}
