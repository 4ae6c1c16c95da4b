import { useState } from 'preact/hooks';
import { v1, type Assistant, type Conversation, type ConversationDetail } from '../api/client.js';
import { Empty, ErrorBox, Loaded, SourceList, Table, useAction, useLoad } from '../ui/components.js';
import { dateTime, dollars } from '../ui/format.js';
import { href } from '../router.js';

type SourceFilter = 'all' | Conversation['source'];

/** Conversations of one assistant, newest first, filterable by where they came from; or one transcript. */
export function ConversationsTab({
  assistant,
  conversationId,
}: {
  assistant: Assistant;
  conversationId: string | undefined;
}) {
  if (conversationId) return <Transcript assistant={assistant} conversationId={conversationId} />;
  return <ConversationList assistant={assistant} />;
}

function ConversationList({ assistant }: { assistant: Assistant }) {
  const [filter, setFilter] = useState<SourceFilter>('all');
  const [more, setMore] = useState<{ items: Conversation[]; cursor: string | null } | null>(null);
  const load = useLoad(async () => {
    setMore(null);
    return v1.GET('/api/v1/conversations', { params: { query: { assistantId: assistant.id, limit: 50 } } });
  }, [assistant.id]);
  const next = useAction(async (cursor: string) => {
    const page = await v1.GET('/api/v1/conversations', {
      params: { query: { assistantId: assistant.id, limit: 50, cursor } },
    });
    setMore((m) => ({ items: [...(m?.items ?? []), ...page.conversations], cursor: page.nextCursor }));
  });
  return (
    <section class="card" aria-labelledby="conv-h">
      <div class="page-head">
        <h2 id="conv-h">Conversations</h2>
        <label class="inline">
          Source
          <select value={filter} onChange={(e) => setFilter(e.currentTarget.value as SourceFilter)}>
            <option value="all">All sources</option>
            <option value="widget">Widget</option>
            <option value="playground">Playground</option>
            <option value="api">API</option>
          </select>
        </label>
      </div>
      <Loaded load={load} label="Loading conversations…">
        {(page) => {
          const all = [...page.conversations, ...(more?.items ?? [])];
          const cursor = more ? more.cursor : page.nextCursor;
          const shown = filter === 'all' ? all : all.filter((c) => c.source === filter);
          return (
            <>
              {shown.length === 0 ? (
                <Empty>
                  <p>
                    {all.length === 0
                      ? 'No conversations yet. Try the playground, or embed the widget.'
                      : 'No conversations from this source among those loaded.'}
                  </p>
                </Empty>
              ) : (
                <Table columns={['Started', 'Source', 'Visitor', 'Messages', 'Last activity']}>
                  {shown.map((c) => (
                    <tr>
                      <td>
                        <a
                          href={href(
                            `/assistants/${encodeURIComponent(assistant.id)}/conversations/${encodeURIComponent(c.id)}`,
                          )}
                        >
                          {dateTime(c.createdAt)}
                        </a>
                      </td>
                      <td>{c.source}</td>
                      <td>{c.visitorId ?? '—'}</td>
                      <td>{c.messageCount}</td>
                      <td>{dateTime(c.updatedAt)}</td>
                    </tr>
                  ))}
                </Table>
              )}
              {cursor && (
                <button type="button" disabled={next.busy} onClick={() => void next.run(cursor)}>
                  Load more conversations
                </button>
              )}
              <ErrorBox error={next.error} />
            </>
          );
        }}
      </Loaded>
    </section>
  );
}

type VoiceCall = ConversationDetail['voiceCalls'][number];

/** A call's outcome in words: how long it ran, what was billed, and why it ended (the real reason: owners see it). */
function callSummary(call: VoiceCall): string {
  if (call.state === 'active') return 'In progress';
  const why = call.endReason === null ? 'the caller hung up' : `ended: ${call.endReason.replace(/_/g, ' ')}`;
  const lost = call.state === 'lost' ? ' (its server stopped; settled by another)' : '';
  return `Duration ${seconds(call.durationSeconds ?? 0)} · billed ${seconds(call.billableSeconds)} · ${why}${lost}`;
}

function seconds(total: number): string {
  const m = Math.floor(total / 60);
  const s = total % 60;
  return m > 0 ? `${m} min ${s} s` : `${s} s`;
}

function Transcript({ assistant, conversationId }: { assistant: Assistant; conversationId: string }) {
  const load = useLoad(
    () => v1.GET('/api/v1/conversations/{conversationId}', { params: { path: { conversationId } } }),
    [conversationId],
  );
  return (
    <section class="card" aria-labelledby="tr-h">
      <p class="crumbs">
        <a href={href(`/assistants/${encodeURIComponent(assistant.id)}/conversations`)}>All conversations</a> /
      </p>
      <h2 id="tr-h">Transcript</h2>
      <Loaded load={load} label="Loading the transcript…">
        {({ conversation, messages, recordings, voiceCalls }) => (
          <>
            <p class="muted">
              {conversation.source} · started {dateTime(conversation.createdAt)}
              {conversation.visitorId ? ` · visitor ${conversation.visitorId}` : ''} · {conversation.messageCount}{' '}
              messages
            </p>
            {voiceCalls.length > 0 && (
              <div class="recordings">
                <h3>Voice calls</h3>
                {voiceCalls.map((call, i) => {
                  const recording = recordings.find((r) => r.sessionId === call.sessionId);
                  return (
                    <div class="recording" aria-label={`Voice call ${i + 1}`} role="group">
                      <p>
                        Call {i + 1} <code>{call.sessionId}</code> · {call.source} · started {dateTime(call.startedAt)}
                      </p>
                      <p class="muted small">{callSummary(call)}</p>
                      {recording &&
                        (recording.ready ? (
                          <audio
                            controls
                            preload="metadata"
                            src={recording.url}
                            aria-label={`Recording of call ${i + 1}`}
                          />
                        ) : (
                          <p class="muted">The recording is still being written (the call may still be running).</p>
                        ))}
                    </div>
                  );
                })}
              </div>
            )}
            {messages.length === 0 ? (
              <Empty>
                <p>No messages in this conversation.</p>
              </Empty>
            ) : (
              <ol class="transcript">
                {messages.map((m) => (
                  <li class={`bubble ${m.role}`}>
                    <span class="bubble-who">{m.role === 'user' ? 'Visitor' : 'Assistant'}</span>
                    <p class="bubble-text">{m.content}</p>
                    <p class="muted small">
                      {dateTime(m.createdAt)}
                      {m.role === 'assistant' && ` · ${m.outcome ?? 'no outcome'} · ${dollars(m.costMicros)}`}
                    </p>
                    {m.feedback && (
                      <p class="small">Feedback: {m.feedback === 'positive' ? 'helpful' : 'not helpful'}</p>
                    )}
                    <SourceList sources={m.sources} />
                  </li>
                ))}
              </ol>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
