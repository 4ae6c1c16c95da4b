/**
 * The chat provider seam: two real implementations (`openai`: any OpenAI-compatible Chat Completions endpoint;
 * `local`: an offline extractive answer), one interface, one shared contract suite (test/providers/chat).
 */
export type ChatTurn =
  | {
      role: 'system' | 'user' | 'assistant';
      content: string;
      /** An assistant turn that called tools (answered by the `tool` turns after it). */
      toolCalls?: ToolCallRequest[] | undefined;
    }
  /** A tool's result (or error) as the model reads it: JSON text. */
  | { role: 'tool'; toolCallId: string; name: string; content: string };

/** A tool offered to the model: its name, what it does, and the JSON Schema of its arguments. */
export interface ChatToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** Phrases with slots ("status of order {orderId}"): how the local provider calls the tool without a model. */
  examples: string[];
}

/** A model's request to call a tool: `arguments` is the JSON text the model wrote (checked before any call). */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

/** A passage of the assistant's knowledge given to the provider as context. */
export interface ContextPassage {
  documentName: string;
  heading: string | null;
  content: string;
}

export interface ChatCompletionRequest {
  /** The full prompt for model providers: system message (instructions + passages), history, the question. */
  messages: ChatTurn[];
  /** The same knowledge as structured passages, best first (the local provider composes from these). */
  passages: ContextPassage[];
  /** The visitor's question, as asked. */
  question: string;
  /** The widget says a voice call ended: say neutrally that voice is not available, give no reason. */
  voiceUnavailable: boolean;
  /** Output-token ceiling (metering caps cost with it). */
  maxOutputTokens: number;
  /** Tools the model may call this round (none: answer in text). */
  tools?: ChatToolSpec[] | undefined;
}

export type ChatStreamEvent =
  | { type: 'text'; text: string }
  /** Token counts as the provider reports them (or estimates, for local). At most once, at the end. */
  | { type: 'usage'; inputTokens: number; outputTokens: number };

export interface ChatProvider {
  readonly name: 'openai' | 'local';
  readonly model: string;
  /**
   * Streams the answer. Errors are ChatProviderError. Retries (openai) happen only before the first text
   * event: once text was yielded, a failure surfaces as `interrupted`, never as a silent restart.
   */
  stream(request: ChatCompletionRequest, signal: AbortSignal): AsyncIterable<ChatStreamEvent>;
  /**
   * Like `stream`, plus the model's calls of the request's `tools`: `tool_call` events, given once the round's stream
   * completed (a call cut off mid-stream is never made). Providers without it answer without tools.
   */
  streamTurn?(request: ChatCompletionRequest, signal: AbortSignal): AsyncIterable<ChatTurnEvent>;
}

/** What one round of a turn yields: text, usage, and the tool calls the model asks for. */
export type ChatTurnEvent = ChatStreamEvent | { type: 'tool_call'; call: ToolCallRequest };

/** What went wrong, by meaning (openai-node style), not by transport detail. */
export type ChatProviderFailure =
  /** The provider is selected but not configured (no key / base URL). */
  | 'not_configured'
  /** 401/403 from upstream: the key is wrong or lacks access. Never retried. */
  | 'authentication'
  /** 400/404/422: the request or model is wrong. Never retried. */
  | 'bad_request'
  /** 429 from upstream after the retries. */
  | 'rate_limited'
  /** 5xx, 408, 409 from upstream after the retries. */
  | 'unavailable'
  /** No answer (headers or the next chunk) within OPENAI_TIMEOUT_MS. */
  | 'timeout'
  /** Could not connect, or the connection failed before any answer. */
  | 'connection'
  /** The stream broke after it had begun (dropped connection, malformed chunk, no end marker). */
  | 'interrupted'
  /** The caller went away. */
  | 'aborted';

export class ChatProviderError extends Error {
  readonly failure: ChatProviderFailure;
  readonly status: number | undefined;
  constructor(failure: ChatProviderFailure, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ChatProviderError';
    this.failure = failure;
    this.status = options.status;
  }
}

export function isChatProviderError(value: unknown): value is ChatProviderError {
  return value instanceof ChatProviderError;
}
