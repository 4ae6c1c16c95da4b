import type { Assistant } from '../../assistants/index.js';
import { completeToolItem, recordToolItems, type ToolItem } from '../../conversations/index.js';
import type {
  VoiceFunctionCall,
  VoiceFunctionTool,
  VoiceSessionConfig,
  VoiceSessionHandlers,
} from '../../providers/voice/index.js';
import { argumentIssues, type RuntimeTool, type ToolOutcome, type ToolRuntime } from '../../tools/index.js';
import { isAppError } from '../../errors/index.js';
import type { VoiceContext } from './context.js';
import { groundQuestion } from './grounding.js';
import type { LiveVoiceSession } from './live-session.js';

/**
 * Tools in a voice call (docs/tools.md, in a voice call). A call whose assistant has tools delegates to the provider's
 * Responses backend with them; the backend's function calls arrive here. Each is made once (a replayed or repeated call
 * id is ignored), never tied to the caller: talking over the assistant cancels nothing, and a result that arrives is
 * given to the model. Calls of one backend response run concurrently; the backend is asked to go on once all of them
 * are answered, and that answer is the backend's (the gate's `backend_answer`). While a sync tool runs the caller hears
 * its `start` message (or a filler), then each `delayed` one at its time; a failure is said with its `failed` message.
 */

/** Parley's own tool in tool-enabled calls: the owner's documents (the grounding a client delegation does otherwise). */
export const SEARCH_DOCUMENTS = 'search_documents';
const SEARCH_TOOL: VoiceFunctionTool = {
  name: SEARCH_DOCUMENTS,
  description:
    "Searches the owner's documents. Use it for any question about facts, products or policies, and answer only " +
    'from what it returns.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', description: "The caller's question." } },
    required: ['query'],
  },
};
/** Built-in tools (assistant settings `builtins`); transfer_call and send_dtmf only on phone calls. */
const BUILTIN_SPECS: Record<string, VoiceFunctionTool> = {
  end_call: {
    name: 'end_call',
    description: 'Ends the call. Use it once the caller is done and you have said goodbye.',
    parameters: { type: 'object', properties: {} },
  },
  transfer_call: {
    name: 'transfer_call',
    description: 'Transfers the phone call to a person at this number; your part of the call ends there.',
    parameters: {
      type: 'object',
      properties: { to: { type: 'string', description: 'E.164, e.g. +15550100123.' }, reason: { type: 'string' } },
      required: ['to'],
    },
  },
  send_dtmf: {
    name: 'send_dtmf',
    description: 'Presses keys on the phone keypad (digits, * and #).',
    parameters: { type: 'object', properties: { digits: { type: 'string' } }, required: ['digits'] },
  },
};
const E164 = /^\+[1-9][0-9]{6,14}$/;
/** After end_call the goodbye being spoken is let finish before the call ends. */
const END_CALL_GRACE_MS = 1500;
const FILLER = 'One moment, let me check that.';
const FAILED = 'Sorry, I could not get that done right now.';
const BACKEND_INSTRUCTIONS =
  'You act for a voice assistant on a live call. Use the tools to answer; say results in plain spoken words, never ' +
  'as JSON or lists. If a tool fails, say so briefly.';

export interface VoiceTooling {
  config: Pick<VoiceSessionConfig, 'tools' | 'backend'>;
  /** The call's handlers, with the function calls' added when it has tools. */
  handlers: VoiceSessionHandlers;
}

/** The tools a new call offers, and the handlers that make their calls (nothing for an assistant without tools). */
export async function voiceToolsOf(
  ctx: VoiceContext,
  session: LiveVoiceSession,
  assistant: Assistant,
  handlers: VoiceSessionHandlers,
  runtime = ctx.tools,
): Promise<VoiceTooling> {
  if (runtime === undefined) return { config: {}, handlers };
  const builtins = assistant.settings.builtins.filter((b) => b === 'end_call' || session.source === 'phone');
  const reserved = new Set<string>([SEARCH_DOCUMENTS, ...builtins]);
  // A database that cannot list the tools does not refuse the call: it goes on without them (and says so).
  const listed = await runtime.toolsOf(assistant.id).catch((err: unknown) => {
    session.log.warn({ err }, 'voice call starts without its tools: they could not be read');
    return [];
  });
  const owned = listed.filter((t) => !reserved.has(t.name));
  if (owned.length === 0 && builtins.length === 0) return { config: {}, handlers };
  const calls = new VoiceToolCalls(ctx, session, runtime, owned, new Set(builtins));
  const specs = [
    ...builtins.map((b) => BUILTIN_SPECS[b]!),
    // The examples are for the local voice, which calls tools by them (a hosted provider never gets them).
    ...owned.map(({ name, description, parameters, examples }) => ({ name, description, parameters, examples })),
  ];
  return {
    config: {
      tools: [SEARCH_TOOL, ...specs],
      backend: {
        model: ctx.deps.config.OPENAI_MODEL,
        instructions: `${assistant.instructions ?? ''}\n\n${BACKEND_INSTRUCTIONS}`.trim(),
      },
    },
    handlers: {
      ...handlers,
      onFunctionCall: (call) => calls.onCall(call),
      onBackendResponseDone: (responseId) => calls.onResponseDone(responseId),
    },
  };
}

/** What the model reads back for one call. */
type Output = Record<string, unknown>;

interface Batch {
  open: number;
  done: boolean;
}

/** The function calls of one voice call. */
export class VoiceToolCalls {
  private readonly seen = new Set<string>();
  private readonly batches = new Map<string, Batch>();
  private readonly tools: Map<string, RuntimeTool>;
  /** Sync owner tools running now (the filler is said once for calls that start together). */
  private running = 0;

  constructor(
    private readonly ctx: VoiceContext,
    private readonly session: LiveVoiceSession,
    private readonly runtime: ToolRuntime,
    tools: RuntimeTool[],
    private readonly builtins: ReadonlySet<string>,
  ) {
    this.tools = new Map(tools.map((t) => [t.name, t]));
  }

  onCall(call: VoiceFunctionCall): void {
    // A call id seen before (a replay after a resume, a repeat) is never made again.
    if (this.seen.has(call.callId) || this.session.status !== 'active') return;
    this.seen.add(call.callId);
    if (call.name === 'end_call' && this.builtins.has('end_call')) return this.endCall();
    const batch = this.batches.get(call.responseId) ?? { open: 0, done: false };
    this.batches.set(call.responseId, batch);
    batch.open++;
    // Parley's own search is grounding (the gate waits for it); an owner tool's time is the owner's (its turn part).
    if (call.name === SEARCH_DOCUMENTS)
      this.session.gate.decide('pending_backend', this.session.gate.current.inputEndMs);
    void this.run(call)
      .catch((err: unknown): Output => {
        this.session.log.error({ err, tool: call.name }, 'voice tool call failed unexpectedly');
        return { error: 'the tool could not be called' };
      })
      .then((output) => {
        if (this.session.status === 'active')
          this.session.provider.sendToBackend?.({
            type: 'function_output',
            callId: call.callId,
            output: JSON.stringify(output),
          });
        batch.open--;
        this.respondWhenAnswered(call.responseId);
      });
  }

  onResponseDone(responseId: string): void {
    const batch = this.batches.get(responseId);
    if (batch === undefined) return;
    batch.done = true;
    this.respondWhenAnswered(responseId);
  }

  /** Every call of the response answered: the backend goes on, and what it says next is its answer. */
  private respondWhenAnswered(responseId: string): void {
    const batch = this.batches.get(responseId);
    if (batch === undefined || !batch.done || batch.open > 0) return;
    this.batches.delete(responseId);
    this.goOn();
  }

  private goOn(): void {
    if (this.session.status !== 'active') return;
    this.session.provider.sendToBackend?.({ type: 'respond' });
    this.session.gate.decide('backend_answer', this.session.gate.current.inputEndMs);
  }

  private async run(call: VoiceFunctionCall): Promise<Output> {
    let args: unknown;
    try {
      args = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
    } catch {
      return { error: 'invalid arguments: not JSON' };
    }
    if (call.name === SEARCH_DOCUMENTS) return this.search(args);
    if (call.name === 'transfer_call' && this.builtins.has(call.name)) return this.transfer(args);
    // Carried out by the phone transport where the carrier allows it; not on this line yet.
    if (this.builtins.has(call.name)) return { error: `${call.name} is not available on this call` };
    const tool = this.tools.get(call.name);
    if (tool === undefined) return { error: `there is no tool named ${call.name}` };
    const issues = argumentIssues(args, tool.parameters);
    // An invalid call never reaches the owner: the model is told what was wrong and may try again.
    if (issues.length > 0)
      return { error: `invalid arguments: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}` };
    return tool.mode === 'async' ? this.startAsync(tool, args, call.callId) : this.runSync(tool, args);
  }

  /** The assistant hangs up: the call ends `assistant_ended` (no fault) once its goodbye had time to be heard. */
  private endCall(): void {
    this.session.timeline.record('tool_called', { name: 'end_call' });
    setTimeout(() => void this.session.end('assistant_ended'), END_CALL_GRACE_MS).unref();
  }

  /**
   * A cold transfer by the carrier, as POST /api/v1/calls/{id}/transfer (a call Parley placed): the carrier's stop
   * that follows ends the assistant's part `transferred`. The answer is stored with the conversation's tool calls
   * (the model rarely hears it: the call is over by then).
   */
  private async transfer(args: unknown): Promise<Output> {
    const to = (args as { to?: unknown } | null)?.to;
    if (typeof to !== 'string' || !E164.test(to))
      return { error: 'invalid arguments: to must be an E.164 number (+ and 7 to 15 digits)' };
    const transfer = this.ctx.transferPhoneCall;
    if (transfer === undefined) return { error: 'transfer_call is not available on this call' };
    this.session.timeline.record('tool_called', { name: 'transfer_call' });
    const started = Date.now();
    this.session.handedOff = true;
    let output: Output;
    try {
      const done = await transfer(this.session.id, to);
      output = done
        ? { result: `The call was transferred to ${to}.` }
        : { error: 'transfer_call is not available on this call' };
    } catch (err) {
      output = {
        error: `the call could not be transferred: ${isAppError(err) ? err.message : 'the carrier did not answer'}`,
      };
    }
    const transferred = output['result'] !== undefined;
    this.session.handedOff = transferred;
    if (transferred) void this.session.end('transferred');
    void this.store({
      id: this.runtime.newCallId(),
      inReplyTo: null,
      toolId: null,
      name: 'transfer_call',
      arguments: args,
      status: transferred ? 'succeeded' : 'failed',
      result: output['result'],
      error: transferred ? null : String(output['error']),
      durationMs: Date.now() - started,
    });
    return output;
  }

  private async search(args: unknown): Promise<Output> {
    const query = (args as { query?: unknown } | null)?.query;
    const answer = await groundQuestion(this.ctx.deps.sql, this.session.assistant, String(query ?? ''));
    this.session.transcripts.attachGrounding(answer.sources, answer.outcome);
    return answer.outcome === 'answered' ? { passages: answer.commentary } : { error: answer.commentary };
  }

  private async runSync(tool: RuntimeTool, args: unknown): Promise<Output> {
    const id = this.runtime.newCallId();
    if (this.running++ === 0) this.say(tool.messages.start ?? FILLER);
    const timers = (tool.messages.delayed ?? []).map((m) => setTimeout(() => this.say(m.text), m.afterMs).unref());
    this.session.timeline.record('tool_called', { name: tool.name, toolCallId: id });
    const clock = this.session.timeline.turnClock;
    clock.toolStarted();
    let outcome: ToolOutcome;
    try {
      outcome = await this.runtime.call(tool, id, args, this.context());
    } finally {
      for (const timer of timers) clearTimeout(timer);
      this.running--;
      clock.toolEnded();
    }
    this.finished(tool, id, outcome);
    void this.store({ ...this.itemOf(tool, id, args), ...outcomeFields(outcome) });
    if (outcome.status === 'succeeded') return { result: outcome.result };
    this.say(tool.messages.failed ?? FAILED);
    return { error: outcome.error, message: tool.messages.failed ?? FAILED };
  }

  /** An async tool: "started" for the model at once; its result is given to it when it arrives. */
  private startAsync(tool: RuntimeTool, args: unknown, callId: string): Output {
    const id = this.runtime.newCallId();
    this.session.timeline.record('tool_called', { name: tool.name, toolCallId: id, mode: 'async' });
    const stored = this.store({
      ...this.itemOf(tool, id, args),
      status: 'pending',
      result: undefined,
      error: null,
      durationMs: 0,
    });
    void this.runtime.callWithRetries(tool, id, args, this.context()).then(async (outcome) => {
      this.finished(tool, id, outcome);
      await stored;
      await completeToolItem(this.ctx.deps.sql, id, outcome).catch((err: unknown) =>
        this.session.log.error({ err }, 'voice tool result not stored'),
      );
      if (this.session.status !== 'active') return;
      const said = outcome.status === 'succeeded' ? { result: outcome.result } : { error: outcome.error };
      // A failure's `failed` message is said here: the output says so (`message`), as a sync call's does.
      const failed = tool.messages.failed ?? FAILED;
      const output = outcome.status === 'succeeded' ? said : { ...said, message: failed };
      this.session.provider.sendToBackend?.({
        type: 'message',
        text: `The result of ${tool.name} (call ${id}) arrived: ${JSON.stringify(said)}`,
        toolResult: { callId, name: tool.name, output: JSON.stringify(output) },
      });
      if (outcome.status === 'failed') this.say(failed);
      this.goOn();
    });
    return { status: 'started', toolCallId: id };
  }

  private finished(tool: RuntimeTool, id: string, outcome: ToolOutcome): void {
    this.session.timeline.record('tool_result', {
      name: tool.name,
      toolCallId: id,
      status: outcome.status,
      ms: outcome.durationMs,
    });
  }

  private itemOf(
    tool: RuntimeTool,
    id: string,
    args: unknown,
  ): Pick<ToolItem, 'id' | 'inReplyTo' | 'toolId' | 'name' | 'arguments'> {
    return { id, inReplyTo: null, toolId: tool.id, name: tool.name, arguments: args };
  }

  private context() {
    const question = this.session.transcripts.pendingQuestion();
    return {
      conversationId: this.session.conversationId,
      assistantId: this.session.assistant.id,
      source: this.session.source,
      sessionId: this.session.id,
      transport: this.session.timeline.transport,
      messages: question === '' ? [] : [{ role: 'user' as const, content: question }],
    };
  }

  /** A line the caller hears while a tool runs (the model speaks it; the gate opens for it). */
  private say(text: string): void {
    if (this.session.status !== 'active' || this.session.providerSession === undefined) return;
    this.session.providerSession.appendCommentary(text);
    this.session.gate.decide('social');
  }

  private async store(item: ToolItem): Promise<void> {
    const conversation = { id: this.session.conversationId, assistantId: this.session.assistant.id };
    await this.ctx.deps.sql
      .begin((tx) => recordToolItems(tx, conversation, [item]))
      .catch((err: unknown) => this.session.log.error({ err }, 'voice tool call not stored'));
  }
}

function outcomeFields(outcome: ToolOutcome): Pick<ToolItem, 'status' | 'result' | 'error' | 'durationMs'> {
  return {
    status: outcome.status,
    result: outcome.result,
    error: outcome.error ?? null,
    durationMs: outcome.durationMs,
  };
}
