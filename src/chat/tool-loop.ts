import type { ToolItem } from '../conversations/index.js';
import type {
  ChatCompletionRequest,
  ChatProvider,
  ChatStreamEvent,
  ChatTurn,
  ToolCallRequest,
} from '../providers/chat/index.js';
import type { RuntimeTool, ToolCallContext, ToolOutcome, ToolRuntime } from '../tools/index.js';

/** Rounds of tool calls one turn may make; after them the model answers without tools. */
export const MAX_TOOL_ROUNDS = 5;

/** A tool's progress, as SSE `tool` events show it ("Checking your order..."). */
export interface ToolProgress {
  toolCallId: string;
  name: string;
  /** started: the request is on its way; async: an async tool accepted (its result comes later). */
  status: 'started' | 'succeeded' | 'failed' | 'async';
  /** The owner's `start` message (on started) or `failed` message (on failed), when the tool has one. */
  message?: string | undefined;
}

/** What the tools of one turn did: items for the conversation, and async calls still running. */
export interface TurnTools {
  items: Omit<ToolItem, 'inReplyTo'>[];
  /** Async calls in flight: their items are stored pending and completed when these settle. */
  pending: Array<{ id: string; outcome: Promise<ToolOutcome> }>;
}

export interface ToolLoopInput {
  provider: ChatProvider;
  request: ChatCompletionRequest;
  tools: RuntimeTool[];
  runtime: ToolRuntime | undefined;
  context: Omit<ToolCallContext, 'messages'>;
  signal: AbortSignal;
  onTool?: ((progress: ToolProgress) => void) | undefined;
}

/**
 * One chat turn with tools: the provider answers, and while it asks for tool calls (at most {@link MAX_TOOL_ROUNDS}
 * rounds) they are made, in parallel within a round, and their results given back to it. Text of every round streams
 * as it comes; usage is summed over the rounds and given once, at the end. Without tools (or a provider that cannot
 * call them) this is the provider's plain stream. A tool request is never tied to the caller's signal: a result that
 * arrives is kept, and a request is never repeated because the caller went away.
 */
export async function* runToolLoop(input: ToolLoopInput, record: TurnTools): AsyncGenerator<ChatStreamEvent> {
  const { provider, runtime, tools } = input;
  if (!runtime || tools.length === 0 || !provider.streamTurn) {
    yield* provider.stream(input.request, input.signal);
    return;
  }
  const specs = tools.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    examples: t.examples,
  }));
  const messages: ChatTurn[] = [...input.request.messages];
  let inputTokens = 0;
  let outputTokens = 0;
  let sawUsage = false;
  for (let round = 0; round <= MAX_TOOL_ROUNDS; round++) {
    const offer = round < MAX_TOOL_ROUNDS ? specs : undefined;
    const calls: ToolCallRequest[] = [];
    let text = '';
    for await (const ev of provider.streamTurn({ ...input.request, messages, tools: offer }, input.signal)) {
      if (ev.type === 'text') {
        text += ev.text;
        yield ev;
      } else if (ev.type === 'usage') {
        sawUsage = true;
        inputTokens += ev.inputTokens;
        outputTokens += ev.outputTokens;
      } else calls.push(ev.call);
    }
    if (calls.length === 0 || input.signal.aborted) break;
    messages.push({ role: 'assistant', content: text, toolCalls: calls });
    const context: ToolCallContext = { ...input.context, messages: conversationOf(messages) };
    const answers = await Promise.all(calls.map((call) => runOne(input, tools, call, context, record)));
    calls.forEach((call, i) =>
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify(answers[i]) }),
    );
  }
  if (sawUsage) yield { type: 'usage', inputTokens, outputTokens };
}

/** The user and assistant turns, as the tool request's `messages` carries them. */
function conversationOf(messages: ChatTurn[]): ToolCallContext['messages'] {
  const out: ToolCallContext['messages'] = [];
  for (const m of messages)
    if ((m.role === 'user' || m.role === 'assistant') && m.content.length > 0)
      out.push({ role: m.role, content: m.content });
  return out;
}

/** Makes one call and answers what the model reads back (`{result}`, `{error, message?}` or `{status: started}`). */
async function runOne(
  input: ToolLoopInput,
  tools: RuntimeTool[],
  call: ToolCallRequest,
  context: ToolCallContext,
  record: TurnTools,
): Promise<Record<string, unknown>> {
  const runtime = input.runtime!;
  const id = runtime.newCallId();
  const tool = tools.find((t) => t.name === call.name);
  let args: unknown;
  try {
    args = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
  } catch {
    args = call.arguments;
  }
  const item = { id, toolId: tool?.id ?? null, name: call.name, arguments: args };
  if (!tool || typeof args !== 'object' || args === null) {
    const error = tool ? 'invalid arguments: not a JSON object' : `there is no tool named ${call.name}`;
    record.items.push({ ...item, status: 'failed', result: undefined, error, durationMs: 0 });
    return { error };
  }
  input.onTool?.({ toolCallId: id, name: tool.name, status: 'started', message: tool.messages.start });
  if (tool.mode === 'async') {
    const outcome = runtime.callWithRetries(tool, id, args, context);
    record.pending.push({ id, outcome });
    record.items.push({ ...item, status: 'pending', result: undefined, error: null, durationMs: 0 });
    input.onTool?.({ toolCallId: id, name: tool.name, status: 'async' });
    return { status: 'started' };
  }
  const outcome = await runtime.call(tool, id, args, context);
  record.items.push({
    ...item,
    status: outcome.status,
    result: outcome.result,
    error: outcome.error ?? null,
    durationMs: outcome.durationMs,
  });
  if (outcome.status === 'succeeded') {
    input.onTool?.({ toolCallId: id, name: tool.name, status: 'succeeded' });
    return { result: outcome.result };
  }
  input.onTool?.({ toolCallId: id, name: tool.name, status: 'failed', message: tool.messages.failed });
  return { error: outcome.error, ...(tool.messages.failed ? { message: tool.messages.failed } : {}) };
}
