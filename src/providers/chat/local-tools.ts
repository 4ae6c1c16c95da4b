import { askFor, matchExamples, spokenName, valueFromReply, type ExampleTool } from './tool-examples.js';
import type { ChatCompletionRequest, ChatTurn, ToolCallRequest } from './types.js';

/** What the offline engine does with tools this round: call one, ask for a value, state results, or nothing. */
export type LocalToolStep = { kind: 'call'; call: ToolCallRequest } | { kind: 'text'; text: string } | { kind: 'none' };

let counter = 0;
const localCallId = () => `local_${Date.now().toString(36)}_${++counter}`;

function call(tool: ExampleTool, args: Record<string, unknown>): LocalToolStep {
  return { kind: 'call', call: { id: localCallId(), name: tool.name, arguments: JSON.stringify(args) } };
}

function propertyOf(tool: ExampleTool, name: string): Record<string, unknown> | undefined {
  return ((tool.parameters['properties'] ?? {}) as Record<string, Record<string, unknown>>)[name];
}

/**
 * The engine's move: after tool results, an answer stating them; else a question matching an example calls its tool
 * (or asks for the first missing required value); else a reply to such a question fills the value it was asked for.
 */
export function localToolStep(request: ChatCompletionRequest): LocalToolStep {
  const tools = request.tools ?? [];
  if (tools.length === 0) return { kind: 'none' };
  const results = trailingToolResults(request.messages);
  if (results.length > 0) return { kind: 'text', text: results.map(stateResult).join('\n\n') };

  for (const tool of tools) {
    const match = matchExamples(request.question, tool);
    if (!match) continue;
    const [first] = match.missing;
    return first === undefined
      ? call(tool, match.args)
      : { kind: 'text', text: askFor(first, propertyOf(tool, first)) };
  }
  // A reply to the engine's own question: the turns before it were the question that meant a tool, then the ask.
  const history = request.messages.filter((m) => m.role === 'user' || m.role === 'assistant');
  const asked = history.at(-2);
  const meant = history.at(-3);
  if (asked?.role !== 'assistant' || meant?.role !== 'user') return { kind: 'none' };
  for (const tool of tools) {
    const match = matchExamples(meant.content, tool);
    const [first, ...rest] = match?.missing ?? [];
    if (!match || first === undefined || asked.content !== askFor(first, propertyOf(tool, first))) continue;
    const value = valueFromReply(request.question, first, tool);
    if (value === undefined) return { kind: 'text', text: askFor(first, propertyOf(tool, first)) };
    const args = { ...match.args, [first]: value };
    const next = rest[0];
    return next === undefined ? call(tool, args) : { kind: 'text', text: askFor(next, propertyOf(tool, next)) };
  }
  return { kind: 'none' };
}

function trailingToolResults(messages: ChatTurn[]): Array<Extract<ChatTurn, { role: 'tool' }>> {
  const out: Array<Extract<ChatTurn, { role: 'tool' }>> = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'tool') break;
    out.unshift(m);
  }
  return out;
}

function sentenceCase(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function plain(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(plain).join(', ');
  return Object.entries(value as Record<string, unknown>)
    .slice(0, 12)
    .map(([k, v]) => `${spokenName(k)} ${plain(v)}`)
    .join(', ');
}

/** One result in words, never as JSON: "Order status: status shipped, eta 2026-12-01." */
function stateResult(message: Extract<ChatTurn, { role: 'tool' }>): string {
  const what = sentenceCase(spokenName(message.name));
  let parsed: { result?: unknown; error?: unknown; message?: unknown } = {};
  try {
    parsed = JSON.parse(message.content) as typeof parsed;
  } catch {
    /* stated as failed below */
  }
  if ((parsed as { status?: unknown }).status === 'started') return `${what} has started; the result will follow.`;
  if (!('result' in parsed)) {
    return typeof parsed.message === 'string'
      ? parsed.message
      : `Sorry, I couldn't get the ${spokenName(message.name)} right now.`;
  }
  const text = plain(parsed.result).trim();
  return `${what}: ${text.length > 0 ? text : 'done'}${/[.!?]$/.test(text) ? '' : '.'}`;
}
