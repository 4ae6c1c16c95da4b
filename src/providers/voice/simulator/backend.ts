import type { ResponseEvent, ServerEvent, SessionResource } from 'openai/resources/live/live';
import type {
  ResponseFunctionToolCall,
  ResponseOutputItemDoneEvent,
  ResponseFunctionCallArgumentsDoneEvent,
} from 'openai/resources/responses/responses';
import type { SimulatedSessionRecord } from './types.js';

/** What the backend needs of its session. */
export interface SimBackendHost {
  emit(event: ServerEvent): void;
  eventId(): string;
  speak(words: string[]): void;
}

/**
 * The simulated Responses backend of a session that delegates to `responses` with function tools (simulator
 * `tool=name{args}` tags, faults.ts): its next reply is, once, one response whose output is the tagged function
 * calls (nested `response.event`s, as the Live protocol streams them); results come back as `response.item.create`
 * (`function_call_output`, or a message) and `response.create` asks it to go on: it then speaks what it was given,
 * in words, so a test hears the result in the answer's transcript.
 */
export class SimBackend {
  private calls: Array<{ name: string; arguments: string }> | undefined;
  private readonly declared: Set<string>;
  private given: string[] = [];
  private responses = 0;

  constructor(
    tools: Array<{ name: string; arguments: string }> | undefined,
    resource: SessionResource,
    private readonly record: SimulatedSessionRecord,
    private readonly host: SimBackendHost,
  ) {
    const delegation = resource.delegation;
    const declared = delegation?.type === 'responses' ? (delegation.responses.tools ?? []) : [];
    this.declared = new Set(declared.flatMap((t) => (t.type === 'function' ? [t.name] : [])));
    // Only tools the session declared can be called (a real backend knows no others).
    const callable = (tools ?? []).filter((t) => this.declared.has(t.name));
    this.calls = callable.length > 0 ? callable : undefined;
  }

  /** The end of the caller's utterance: true when this reply is the tagged function calls (once). */
  reply(): boolean {
    const calls = this.calls;
    if (calls === undefined) return false;
    this.calls = undefined;
    const responseId = `resp_sim_${this.record.id.slice(-6)}_${++this.responses}`;
    const response = { id: responseId, object: 'response', status: 'in_progress', output: [] };
    this.nested({ type: 'response.created', sequence_number: 0, response });
    calls.forEach((call, index) => {
      const item: ResponseFunctionToolCall = {
        type: 'function_call',
        id: `fc_${responseId}_${index}`,
        call_id: `call_${this.record.id.slice(-6)}_${this.responses}_${index}`,
        name: call.name,
        arguments: call.arguments,
        status: 'completed',
      };
      const argsDone: ResponseFunctionCallArgumentsDoneEvent = {
        type: 'response.function_call_arguments.done',
        item_id: item.id!,
        output_index: index,
        arguments: call.arguments,
        sequence_number: 2 * index + 1,
      };
      this.nested(argsDone);
      const done: ResponseOutputItemDoneEvent = {
        type: 'response.output_item.done',
        item,
        output_index: index,
        sequence_number: 2 * index + 2,
      };
      this.nested(done);
      this.record.functionCalls.push({ callId: item.call_id, name: call.name, arguments: call.arguments });
    });
    this.nested({
      type: 'response.completed',
      sequence_number: 2 * calls.length + 1,
      response: { ...response, status: 'completed' },
    });
    return true;
  }

  /** `response.item.create`: a function's output or a message, kept until `response.create`. */
  item(raw: unknown): void {
    const item = raw as { type?: unknown; call_id?: unknown; output?: unknown; content?: unknown } | undefined;
    this.record.backendItems.push(raw);
    if (item?.type === 'function_call_output' && typeof item.output === 'string') this.given.push(item.output);
    else if (item?.type === 'message' && typeof item.content === 'string') this.given.push(item.content);
  }

  /** `response.create`: speak what was given, in words. */
  respond(): void {
    const words = this.given
      .join(' ')
      .replace(/[{}[\]",:]/g, ' ')
      .split(/\s+/)
      .filter(Boolean);
    this.given = [];
    if (words.length > 0) this.host.speak(words);
  }

  private nested(event: object): void {
    const outer: ResponseEvent = {
      type: 'response.event',
      event_id: this.host.eventId(),
      delegation_id: null,
      event: event as unknown as ResponseEvent['event'],
    };
    this.host.emit(outer);
  }
}
