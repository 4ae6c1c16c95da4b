import { localToolStep, type ChatToolSpec, type ChatTurn, type LocalToolStep } from '../../chat/index.js';
import type { VoiceBackendCommand, VoiceFunctionTool } from '../types.js';
import { withDigits } from './language-model.js';

/**
 * Tools in a local call (docs/tools.md, offline): the local voice has no model, so it calls the owner's tools the way
 * the local chat engine does, by the tools' `examples` (the chat engine's matching, `localToolStep`, run on what the
 * recognizer heard, its spoken numbers as digits). Its calls go out as a backend's function calls would
 * (`onFunctionCall`), Parley makes them (the same request, checks and records as every voice call), and their outputs
 * come back through `sendToBackend`; once all are answered, the engine's sentence stating them is spoken. An async
 * call's output says it started (that is said); its result comes later in a message (`toolResult`) and is stated the
 * same way when Parley asks to go on.
 */

type ToolTurn = Extract<ChatTurn, { role: 'tool' }>;

/** Turns kept for the engine (it reads back at most the question, its own ask and the reply). */
const MAX_TURNS = 12;
/** Slot values the recognizer should be able to hear: digits, said one after another. */
const SPOKEN_DIGITS = 'zero one two three four five six seven eight nine';

export class LocalVoiceTools {
  private readonly specs: ChatToolSpec[];
  private history: ChatTurn[] = [];
  /** Outputs of the calls being made, by call id, in the order they were asked for. */
  private readonly open = new Map<string, { name: string; output?: string }>();
  /** Async calls said to have started, by call id: their results are still to come. */
  private readonly started = new Map<string, string>();
  /** Results of async calls that arrived, not said yet. */
  private arrived: ToolTurn[] = [];

  constructor(tools: readonly VoiceFunctionTool[] = []) {
    this.specs = tools
      .filter((t) => (t.examples?.length ?? 0) > 0)
      .map((t) => ({ name: t.name, description: t.description, parameters: t.parameters, examples: t.examples! }));
  }

  get any(): boolean {
    return this.specs.length > 0;
  }

  /**
   * What callers say to these tools, for the recognizer's language model: each example with any digit in its slots,
   * and every pair of digits, so that a digit is as likely as any other after an example and after another digit.
   */
  speechHints(): string {
    if (!this.any) return '';
    const digits = SPOKEN_DIGITS.split(' ');
    const lines: string[] = [];
    for (const t of this.specs)
      for (const e of t.examples) for (const d of digits) lines.push(e.replace(/\{[^}]*\}/g, ` ${d} `));
    for (const a of digits) for (const b of digits) lines.push(`${a} ${b}`);
    return `${lines.join('.\n')}.`;
  }

  /** The engine's move for a heard question: call a tool, ask for a value, or nothing (the documents answer). */
  step(heard: string): LocalToolStep {
    if (!this.any || this.open.size > 0) return { kind: 'none' };
    const question = withDigits(heard);
    this.remember({ role: 'user', content: question });
    const step = localToolStep({
      messages: this.history,
      passages: [],
      question,
      voiceUnavailable: false,
      maxOutputTokens: 0,
      tools: this.specs,
    });
    if (step.kind === 'call') {
      this.remember({ role: 'assistant', content: '', toolCalls: [step.call] });
      this.open.set(step.call.id, { name: step.call.name });
    } else if (step.kind === 'text') this.remember({ role: 'assistant', content: step.text });
    return step;
  }

  /** Something else was said for the caller (a grounded answer): the engine's next reading of a reply sees it. */
  said(text: string): void {
    if (this.any) this.remember({ role: 'assistant', content: text });
  }

  /**
   * A command for the backend: the sentence to speak once every call is answered (and any async results that
   * arrived meanwhile), else undefined.
   */
  command(command: VoiceBackendCommand): string | undefined {
    if (command.type === 'function_output') {
      const call = this.open.get(command.callId);
      if (call !== undefined) call.output = command.output;
      return undefined;
    }
    if (command.type === 'message') {
      const late = command.toolResult;
      if (late !== undefined && this.started.delete(late.callId))
        this.arrived.push({ role: 'tool', toolCallId: late.callId, name: late.name, content: late.output });
      return undefined;
    }
    if (this.open.size === 0 && this.arrived.length === 0) return undefined;
    const answered = [...this.open].filter(([, c]) => c.output !== undefined);
    if (answered.length < this.open.size) return undefined;
    this.open.clear();
    for (const [id, c] of answered) if (hasStarted(c.output!)) this.started.set(id, c.name);
    // A failure whose owner's `failed` message was already said (the call said it) is not said twice.
    const results = [
      ...answered.map(([id, c]): ToolTurn => ({ role: 'tool', toolCallId: id, name: c.name, content: c.output! })),
      ...this.arrived.splice(0),
    ].filter((r) => !saidAlready(r.content));
    for (const r of results) this.remember(r);
    if (results.length === 0) return undefined;
    const step = localToolStep({
      messages: this.history,
      passages: [],
      question: '',
      voiceUnavailable: false,
      maxOutputTokens: 0,
      tools: this.specs,
    });
    if (step.kind !== 'text') return undefined;
    this.remember({ role: 'assistant', content: step.text });
    return step.text;
  }

  private remember(turn: ChatTurn): void {
    this.history.push(turn);
    if (this.history.length > MAX_TURNS) this.history = this.history.slice(-MAX_TURNS);
  }
}

function parsed(output: string): { message?: unknown; status?: unknown } {
  try {
    const value: unknown = JSON.parse(output);
    return value !== null && typeof value === 'object' ? value : {};
  } catch {
    return {};
  }
}

function saidAlready(output: string): boolean {
  return typeof parsed(output).message === 'string';
}

/** An async call's output: it started, its result comes later. */
function hasStarted(output: string): boolean {
  return parsed(output).status === 'started';
}
