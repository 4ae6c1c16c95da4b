import { useState } from 'preact/hooks';
import { v1, type Assistant, type Conversation, type ConversationDetail } from '../api/client.js';
import { CallTimelinePicture } from '../ui/call-timeline.js';
import { AnalysisPanel } from './conversation-analysis.js';
import { ConfirmButton, Empty, ErrorBox, Loaded, Table, useAction, useLoad } from '../ui/components.js';
import { TranscriptList } from './transcript-items.js';
import { count, dateTime, dollars } from '../ui/format.js';
import { href, navigate } from '../router.js';

type Filters = {
  q: string;
  channel: '' | 'chat' | 'voice';
  outcome: '' | NonNullable<Conversation['outcome']>;
  from: string;
  to: string;
  success: '' | 'pass' | 'fail';
  sentiment: '' | 'positive' | 'neutral' | 'negative';
  dataField: string;
  dataValue: string;
};
const NO_FILTERS: Filters = {
  q: '',
  channel: '',
  outcome: '',
  from: '',
  to: '',
  success: '',
  sentiment: '',
  dataField: '',
  dataValue: '',
};

/** Conversations of one assistant, newest first, searchable and filterable; or one transcript. */
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

/** The list's query: the assistant and the filters that are set (the CSV export takes the same). */
function queryOf(assistantId: string, f: Filters) {
  return {
    assistantId,
    ...(f.q.trim() ? { q: f.q.trim() } : {}),
    ...(f.channel ? { channel: f.channel } : {}),
    ...(f.outcome ? { outcome: f.outcome } : {}),
    ...(f.from ? { from: f.from } : {}),
    ...(f.to ? { to: f.to } : {}),
    ...(f.success ? { success: f.success } : {}),
    ...(f.sentiment ? { sentiment: f.sentiment } : {}),
    ...(f.dataField.trim() ? { dataField: f.dataField.trim() } : {}),
    ...(f.dataValue.trim() ? { dataValue: f.dataValue.trim() } : {}),
  };
}

/** The list's analysis cell: the verdict and the sentiment, in words. */
function analysisWords(c: Conversation): string {
  if (c.analysis === null) return '—';
  const verdict = c.analysis.success === null ? null : c.analysis.success === 'pass' ? 'Passed' : 'Failed';
  const words = [verdict, c.analysis.sentiment].filter((w) => w !== null);
  return words.length > 0 ? words.join(' · ') : 'Analysed';
}

const OUTCOME_WORDS: Record<NonNullable<Conversation['outcome']>, string> = {
  answered: 'Answered',
  no_answer: 'Not answered',
  model_failure: 'Model failed',
};

function ConversationList({ assistant }: { assistant: Assistant }) {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [more, setMore] = useState<{ items: Conversation[]; cursor: string | null } | null>(null);
  const query = queryOf(assistant.id, filters);
  const load = useLoad(async () => {
    setMore(null);
    return v1.GET('/api/v1/conversations', { params: { query: { ...query, limit: 50 } } });
  }, [assistant.id, JSON.stringify(filters)]);
  const next = useAction(async (cursor: string) => {
    const page = await v1.GET('/api/v1/conversations', { params: { query: { ...query, limit: 50, cursor } } });
    setMore((m) => ({ items: [...(m?.items ?? []), ...page.conversations], cursor: page.nextCursor }));
  });
  const csv = `/api/v1/conversations/export?${new URLSearchParams(query as Record<string, string>).toString()}`;
  const set = (patch: Partial<Filters>) => setDraft({ ...draft, ...patch });
  return (
    <section class="card" aria-labelledby="conv-h">
      <div class="page-head">
        <h2 id="conv-h">Conversations</h2>
        <a class="button" href={csv} download>
          Export CSV
        </a>
      </div>
      <form
        class="filters"
        role="search"
        aria-label="Conversation filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        <label>
          Search
          <input
            type="search"
            value={draft.q}
            maxLength={200}
            placeholder="Words in any message"
            onInput={(e) => set({ q: e.currentTarget.value })}
          />
        </label>
        <label>
          Channel
          <select value={draft.channel} onChange={(e) => set({ channel: e.currentTarget.value as Filters['channel'] })}>
            <option value="">Chat and voice</option>
            <option value="chat">Chat only</option>
            <option value="voice">With a voice call</option>
          </select>
        </label>
        <label>
          Outcome
          <select value={draft.outcome} onChange={(e) => set({ outcome: e.currentTarget.value as Filters['outcome'] })}>
            <option value="">Any outcome</option>
            <option value="no_answer">Not answered</option>
            <option value="answered">Answered</option>
            <option value="model_failure">Model failed</option>
          </select>
        </label>
        <label>
          Success
          <select value={draft.success} onChange={(e) => set({ success: e.currentTarget.value as Filters['success'] })}>
            <option value="">Any verdict</option>
            <option value="pass">Passed</option>
            <option value="fail">Failed</option>
          </select>
        </label>
        <label>
          Sentiment
          <select
            value={draft.sentiment}
            onChange={(e) => set({ sentiment: e.currentTarget.value as Filters['sentiment'] })}
          >
            <option value="">Any sentiment</option>
            <option value="positive">Positive</option>
            <option value="neutral">Neutral</option>
            <option value="negative">Negative</option>
          </select>
        </label>
        <label>
          Field
          <input
            value={draft.dataField}
            maxLength={64}
            pattern="[A-Za-z_][A-Za-z0-9_]*"
            placeholder="orderNumber"
            onInput={(e) => set({ dataField: e.currentTarget.value })}
          />
        </label>
        <label>
          Field value
          <input
            type="search"
            value={draft.dataValue}
            maxLength={200}
            placeholder="Words in a structured field"
            onInput={(e) => set({ dataValue: e.currentTarget.value })}
          />
        </label>
        <label>
          From
          <input type="date" value={draft.from} onInput={(e) => set({ from: e.currentTarget.value })} />
        </label>
        <label>
          To
          <input type="date" value={draft.to} onInput={(e) => set({ to: e.currentTarget.value })} />
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            Search
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(NO_FILTERS);
              setFilters(NO_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <Loaded load={load} label="Loading conversations…">
        {(page) => {
          const all = [...page.conversations, ...(more?.items ?? [])];
          const cursor = more ? more.cursor : page.nextCursor;
          const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);
          return (
            <>
              {all.length === 0 ? (
                <Empty>
                  <p>
                    {filtered
                      ? 'No conversation matches these filters.'
                      : 'No conversations yet. Try the playground, or embed the widget.'}
                  </p>
                </Empty>
              ) : (
                <Table
                  columns={[
                    'Started',
                    'Channel',
                    'Visitor',
                    'First message',
                    'Duration',
                    'Cost',
                    'Outcome',
                    'Analysis',
                  ]}
                >
                  {all.map((c) => (
                    <tr>
                      <td>
                        <a
                          href={href(
                            `/assistants/${encodeURIComponent(assistant.publicId)}/conversations/${encodeURIComponent(c.id)}`,
                          )}
                        >
                          {dateTime(c.startedAt)}
                        </a>
                      </td>
                      <td>{channelOf(c)}</td>
                      <td title={c.visitorId ?? undefined}>
                        {c.visitorLabel}
                        {c.callerNumber !== null && <span class="muted"> {c.callerNumber}</span>}
                      </td>
                      <td class="first-message">{c.firstMessage ?? '—'}</td>
                      <td>{seconds(c.durationSeconds)}</td>
                      <td>{dollars(c.costMicros)}</td>
                      <td>{c.outcome ? OUTCOME_WORDS[c.outcome] : '—'}</td>
                      <td title={c.analysis?.summary ?? undefined}>{analysisWords(c)}</td>
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

/** The list's channel cell: a phone call is marked as such (its calls came through a carrier). */
function channelOf(c: Conversation): string {
  if (c.source === 'phone') return `Phone (${c.callCount})`;
  return c.channel === 'voice' ? `Voice (${c.callCount})` : 'Chat';
}

/** A call's outcome in words: how long it ran, what was billed, and why it ended (the real reason: owners see it). */
function callSummary(call: VoiceCall): string {
  if (call.state === 'active') return 'In progress';
  const why = call.endReason === null ? 'the caller hung up' : `ended: ${call.endReason.replace(/_/g, ' ')}`;
  const lost = call.state === 'lost' ? ' (its server stopped; settled by another)' : '';
  return `Duration ${seconds(call.durationSeconds ?? 0)} · billed ${seconds(call.billableSeconds)} · ${why}${lost} · cost ${dollars(call.costMicros)}`;
}

function seconds(total: number): string {
  const m = Math.floor(total / 60);
  const s = total % 60;
  return m > 0 ? `${m} min ${s} s` : `${s} s`;
}

function Transcript({ assistant, conversationId }: { assistant: Assistant; conversationId: string }) {
  const back = `/assistants/${encodeURIComponent(assistant.publicId)}/conversations`;
  const load = useLoad(
    () => v1.GET('/api/v1/conversations/{conversationId}', { params: { path: { conversationId } } }),
    [conversationId],
  );
  return (
    <section class="card" aria-labelledby="tr-h">
      <p class="crumbs">
        <a href={href(`/assistants/${encodeURIComponent(assistant.publicId)}/conversations`)}>All conversations</a> /
      </p>
      <h2 id="tr-h">Transcript</h2>
      <Loaded load={load} label="Loading the transcript…">
        {({ conversation, messages, recordings, voiceCalls, analysis, toolCalls }) => (
          <>
            <p class="muted">
              {conversation.source === 'phone' ? 'Phone call' : conversation.channel === 'voice' ? 'Voice' : 'Chat'}
              {conversation.callerNumber !== null ? ` from ${conversation.callerNumber}` : ''} · {conversation.source} ·
              started {dateTime(conversation.startedAt)} · {seconds(conversation.durationSeconds)} ·{' '}
              <span title={conversation.visitorId ?? undefined}>{conversation.visitorLabel}</span> ·{' '}
              {count(conversation.messageCount, 'message')} · {dollars(conversation.costMicros)}
            </p>
            <div class="actions conversation-actions">
              <a class="button" href={`/api/v1/conversations/${encodeURIComponent(conversation.id)}/export`} download>
                Export JSON
              </a>
              <ConfirmButton
                label="Delete conversation"
                confirmLabel="Yes, delete it"
                question="Delete this conversation, its feedback and its call recordings for good?"
                onConfirm={async () => {
                  await v1.DELETE('/api/v1/conversations/{conversationId}', {
                    params: { path: { conversationId: conversation.id } },
                  });
                  navigate(back);
                }}
              />
              {conversation.visitorId !== null && (
                <ConfirmButton
                  label="Delete everything about this visitor"
                  confirmLabel="Yes, delete all of it"
                  question={`Delete every conversation, recording and rating of ${conversation.visitorLabel}, for good?`}
                  onConfirm={async () => {
                    await v1.DELETE('/api/v1/visitors/{visitorId}', {
                      params: { path: { visitorId: conversation.visitorId! } },
                    });
                    navigate(back);
                  }}
                />
              )}
            </div>
            {analysis && <AnalysisPanel analysis={analysis} />}
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
                      <CallTimelinePicture sessionId={call.sessionId} label={`call ${i + 1}`} />
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
              <TranscriptList messages={messages} toolCalls={toolCalls} />
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
