import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import { SseDataReader } from './sse-lines.js';
import {
  ChatProviderError,
  type ChatCompletionRequest,
  type ChatProvider,
  type ChatStreamEvent,
  type ChatTurn,
  type ChatTurnEvent,
} from './types.js';

export interface OpenAiProviderOptions {
  /** e.g. https://api.openai.com/v1 or any OpenAI-compatible server (…/v1). */
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  /** Time allowed for the answer to begin, and between two chunks of it (OPENAI_TIMEOUT_MS). */
  timeoutMs: number;
  /** Retries after the first attempt (default 2: three attempts in all). */
  maxRetries?: number;
  /** Base of the exponential backoff (default 250 ms). */
  backoffBaseMs?: number;
  /** A Retry-After longer than this is not waited for: the request fails as rate_limited (default 10 s). */
  maxRetryAfterMs?: number;
  dispatcher?: Dispatcher;
}

/**
 * Retry policy (written down, like openai-node's):
 * - Retried: connection failures before any answer, timeouts before the answer began, HTTP 408, 409, 429
 *   and 5xx. Never retried: 400, 401, 403, 404, 422, and anything after the first text chunk was yielded
 *   (a half-streamed answer cannot be taken back; it fails as `interrupted`).
 * - At most `maxRetries` (2) retries; the wait is `backoffBaseMs * 2^n` with ±25 % jitter, capped at 4 s,
 *   or the upstream's Retry-After (seconds or HTTP date) when it is given and not above 10 s.
 * - The caller's AbortSignal stops everything at once, including a backoff wait.
 */
export function createOpenAiProvider(options: OpenAiProviderOptions): ChatProvider {
  const base = options.baseUrl.replace(/\/+$/, '');
  const maxRetries = options.maxRetries ?? 2;
  const backoffBase = options.backoffBaseMs ?? 250;
  const maxRetryAfter = options.maxRetryAfterMs ?? 10_000;
  const dispatcher =
    options.dispatcher ??
    new Agent({
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: Math.min(options.timeoutMs, 10_000) },
    });

  function backoffMs(retry: number): number {
    const raw = Math.min(4000, backoffBase * 2 ** retry);
    return Math.round(raw * (0.75 + Math.random() * 0.5));
  }

  async function* attempt(body: string, signal: AbortSignal, onStarted: () => void): AsyncGenerator<ChatTurnEvent> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${base}/chat/completions`, {
        method: 'POST',
        dispatcher,
        signal,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body,
      });
    } catch (err) {
      throw classifyTransport(err, signal, false);
    }
    if (res.statusCode !== 200) {
      const text = await readCapped(res, 16 * 1024);
      throw statusError(res.statusCode, text, res.headers['retry-after']);
    }
    const reader = new SseDataReader();
    const toolCalls: ToolCallParts = new Map();
    let sawDone = false;
    let sawText = false;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        for (const data of reader.push(chunk.toString('utf8'))) {
          if (data.trim() === '[DONE]') {
            sawDone = true;
            continue;
          }
          const events = parseChunk(data, toolCalls);
          for (const ev of events) {
            if (ev.type === 'text' && !sawText) {
              sawText = true;
              onStarted();
            }
            yield ev;
          }
        }
      }
      for (const data of reader.flush()) if (data.trim() === '[DONE]') sawDone = true;
    } catch (err) {
      if (err instanceof ChatProviderError) throw err;
      throw classifyTransport(err, signal, true);
    }
    if (!sawDone) throw new ChatProviderError('interrupted', 'The provider stream ended before it was complete.');
    // Tool calls only from a complete stream: a call cut off mid-arguments is never made.
    for (const [, part] of [...toolCalls].sort(([a], [b]) => a - b))
      yield { type: 'tool_call', call: { id: part.id, name: part.name, arguments: part.arguments } };
  }

  async function* streamTurn(req: ChatCompletionRequest, signal: AbortSignal): AsyncGenerator<ChatTurnEvent> {
    const body = JSON.stringify({
      model: options.model,
      messages: req.messages.map(wireMessage),
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: req.maxOutputTokens,
      ...(req.tools && req.tools.length > 0
        ? {
            tools: req.tools.map((t) => ({
              type: 'function',
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
          }
        : {}),
    });
    for (let retry = 0; ; retry++) {
      let started = false;
      try {
        for await (const ev of attempt(body, signal, () => (started = true))) yield ev;
        return;
      } catch (err) {
        const error = err instanceof ChatProviderError ? err : classifyTransport(err, signal, started);
        if (signal.aborted) throw new ChatProviderError('aborted', 'The request was cancelled.', { cause: err });
        if (started) {
          // Text already left: never retry; a broken stream is an interruption whatever its cause.
          throw error.failure === 'interrupted'
            ? error
            : new ChatProviderError('interrupted', 'The provider stream broke off.', { cause: error });
        }
        const retryable =
          error.failure === 'connection' ||
          error.failure === 'timeout' ||
          error.failure === 'unavailable' ||
          error.failure === 'rate_limited';
        const wait = (error as ChatProviderError & { retryAfterMs?: number }).retryAfterMs ?? backoffMs(retry);
        if (!retryable || retry >= maxRetries || wait > maxRetryAfter) throw error;
        try {
          await sleep(wait, undefined, { signal });
        } catch {
          throw new ChatProviderError('aborted', 'The request was cancelled.');
        }
      }
    }
  }

  return {
    name: 'openai',
    model: options.model,
    async *stream(req: ChatCompletionRequest, signal: AbortSignal): AsyncGenerator<ChatStreamEvent> {
      for await (const ev of streamTurn({ ...req, tools: undefined }, signal)) if (ev.type !== 'tool_call') yield ev;
    },
    streamTurn,
  };
}

/** A turn as Chat Completions takes it (tool calls and tool results in their wire shape). */
function wireMessage(m: ChatTurn): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  if (m.toolCalls && m.toolCalls.length > 0) {
    return {
      role: 'assistant',
      content: m.content === '' ? null : m.content,
      tool_calls: m.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    };
  }
  return { role: m.role, content: m.content };
}

/** Streamed tool calls, by index: the id and name come first, the arguments in pieces. */
type ToolCallParts = Map<number, { id: string; name: string; arguments: string }>;

interface ToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

function parseChunk(data: string, toolCalls: ToolCallParts): ChatTurnEvent[] {
  let parsed: {
    choices?: Array<{ delta?: { content?: string | null; tool_calls?: ToolCallDelta[] } }>;
    usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
    error?: { message?: string };
  };
  try {
    parsed = JSON.parse(data) as typeof parsed;
  } catch (cause) {
    throw new ChatProviderError('interrupted', 'The provider sent a malformed stream chunk.', { cause });
  }
  if (parsed.error) throw new ChatProviderError('interrupted', 'The provider reported an error mid-stream.');
  const out: ChatTurnEvent[] = [];
  const text = parsed.choices?.[0]?.delta?.content;
  if (typeof text === 'string' && text.length > 0) out.push({ type: 'text', text });
  for (const delta of parsed.choices?.[0]?.delta?.tool_calls ?? []) {
    const index = delta.index ?? 0;
    const part = toolCalls.get(index) ?? { id: '', name: '', arguments: '' };
    if (delta.id) part.id = delta.id;
    if (delta.function?.name) part.name += delta.function.name;
    if (delta.function?.arguments) part.arguments += delta.function.arguments;
    toolCalls.set(index, part);
  }
  if (parsed.usage && typeof parsed.usage.prompt_tokens === 'number') {
    out.push({
      type: 'usage',
      inputTokens: parsed.usage.prompt_tokens,
      outputTokens: parsed.usage.completion_tokens ?? 0,
    });
  }
  return out;
}

async function readCapped(res: Dispatcher.ResponseData, max: number): Promise<string> {
  let text = '';
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (text.length < max) text += chunk.toString('utf8');
    }
  } catch {
    /* the status already says enough */
  }
  return text.slice(0, max);
}

function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function statusError(status: number, body: string, retryAfter: string | string[] | undefined): ChatProviderError {
  // The upstream message may echo our request; keep it out of the error text (it can reach logs).
  const failure =
    status === 401 || status === 403
      ? 'authentication'
      : status === 429
        ? 'rate_limited'
        : status === 408 || status === 409 || status >= 500
          ? 'unavailable'
          : 'bad_request';
  const error = new ChatProviderError(failure, `The chat provider answered HTTP ${status}.`, { status });
  const wait = retryAfterMs(retryAfter);
  if (wait !== undefined) Object.assign(error, { retryAfterMs: wait });
  void body;
  return error;
}

function classifyTransport(err: unknown, signal: AbortSignal, started: boolean): ChatProviderError {
  if (err instanceof ChatProviderError) return err;
  if (signal.aborted) return new ChatProviderError('aborted', 'The request was cancelled.', { cause: err });
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new ChatProviderError(started ? 'interrupted' : 'timeout', 'The chat provider did not answer in time.', {
      cause: err,
    });
  }
  return new ChatProviderError(
    started ? 'interrupted' : 'connection',
    started ? 'The provider stream broke off.' : 'Could not reach the chat provider.',
    { cause: err },
  );
}
