import type { ConversationDetail, Message } from '../api/client.js';
import { SourceList } from '../ui/components.js';
import { dateTime, dollars } from '../ui/format.js';

type ToolCall = ConversationDetail['toolCalls'][number];

type Item = { kind: 'message'; message: Message; index: number } | { kind: 'tool'; call: ToolCall };

/**
 * The transcript in the order things happened: each tool call right after the question of its turn (`inReplyTo`, in
 * chat), or, where it has none (a voice call), where its time falls between the messages.
 */
export function transcriptItems(messages: Message[], toolCalls: ToolCall[]): Item[] {
  const ids = new Set(messages.map((m) => m.id));
  const ofTurn = new Map<string, ToolCall[]>();
  const timed: ToolCall[] = [];
  for (const call of toolCalls) {
    if (call.inReplyTo !== null && ids.has(call.inReplyTo))
      ofTurn.set(call.inReplyTo, [...(ofTurn.get(call.inReplyTo) ?? []), call]);
    else timed.push(call);
  }
  timed.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
  const items: Item[] = [];
  let next = 0;
  messages.forEach((message, index) => {
    const at = Date.parse(message.createdAt);
    while (next < timed.length && Date.parse(timed[next]!.createdAt) < at)
      items.push({ kind: 'tool', call: timed[next++]! });
    items.push({ kind: 'message', message, index });
    for (const call of ofTurn.get(message.id) ?? []) items.push({ kind: 'tool', call });
  });
  for (; next < timed.length; next++) items.push({ kind: 'tool', call: timed[next]! });
  return items;
}

const MAX_JSON = 2000;

/** A JSON value as the owner's server sent it (or the model wrote it), bounded. */
function json(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > MAX_JSON ? `${text.slice(0, MAX_JSON)}…` : text;
}

const STATUS_WORDS: Record<ToolCall['status'], string> = {
  pending: 'Waiting for the result',
  succeeded: 'Succeeded',
  failed: 'Failed',
};

function ToolCallBubble({ call }: { call: ToolCall }) {
  return (
    <li class={`bubble tool ${call.status}`} aria-label={`Tool call ${call.name}`}>
      <span class="bubble-who">Tool: {call.name}</span>
      <p class="bubble-text small">
        Arguments: <code>{json(call.arguments)}</code>
      </p>
      {call.status === 'succeeded' && (
        <p class="bubble-text small">
          Result: <code>{json(call.result)}</code>
        </p>
      )}
      {call.status === 'failed' && <p class="bubble-text small tool-error">Error: {call.error ?? 'unknown'}</p>}
      <p class="muted small">
        {dateTime(call.createdAt)} · {STATUS_WORDS[call.status]}
        {call.status !== 'pending' && ` · took ${call.durationMs} ms`}
      </p>
    </li>
  );
}

/** The messages of a conversation with its tool calls among them. */
export function TranscriptList({ messages, toolCalls }: { messages: Message[]; toolCalls: ToolCall[] }) {
  return (
    <ol class="transcript">
      {transcriptItems(messages, toolCalls).map((item) => {
        if (item.kind === 'tool') return <ToolCallBubble call={item.call} />;
        const { message: m, index: i } = item;
        return (
          <li class={`bubble ${m.role}`}>
            <span class="bubble-who">{m.role === 'user' ? 'Visitor' : 'Assistant'}</span>
            <p class="bubble-text">{m.content}</p>
            <p class="muted small">
              {dateTime(m.createdAt)}
              {m.role === 'assistant' && ` · ${m.outcome ?? 'no outcome'} · ${dollars(m.costMicros)}`}
              {/* A question the next message does not answer (the caller asked again, or the call ended). */}
              {m.role === 'user' && messages[i + 1]?.role !== 'assistant' && (
                <strong class="unanswered"> · Not answered</strong>
              )}
            </p>
            {m.feedback && <p class="small">Feedback: {m.feedback === 'positive' ? 'helpful' : 'not helpful'}</p>}
            <SourceList sources={m.sources} />
          </li>
        );
      })}
    </ol>
  );
}
