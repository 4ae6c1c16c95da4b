import { useState } from 'preact/hooks';
import { v1, type CallLogEntry } from '../api/client.js';
import { href, navigate, useRoute } from '../router.js';
import { Empty, ErrorBox, Loaded, Table, useAction, useLoad } from '../ui/components.js';
import { dateTime, dollars } from '../ui/format.js';

const FIELDS = ['assistantId', 'source', 'transport', 'phoneNumber', 'endReason', 'from', 'to'] as const;
type Field = (typeof FIELDS)[number];
type Filters = Record<Field, string>;

const END_REASONS = [
  'hangup',
  'idle',
  'max_duration',
  'usage_limit',
  'superseded',
  'disconnected',
  'heartbeat_lost',
  'control_lost',
  'voice_unavailable',
  'shutdown',
  'assistant_ended',
  'transferred',
];

/** An end reason as owners read it (they see the real reason, hangup included). */
export function endReasonWords(reason: string): string {
  return reason === 'hangup' ? 'Caller hung up' : reason.charAt(0).toUpperCase() + reason.slice(1).replace(/_/g, ' ');
}

function filtersOf(search: URLSearchParams): Filters {
  return Object.fromEntries(FIELDS.map((f) => [f, search.get(f) ?? ''])) as Filters;
}

function queryOf(f: Filters): Record<string, string> {
  return Object.fromEntries(FIELDS.filter((k) => f[k].trim() !== '').map((k) => [k, f[k].trim()]));
}

function seconds(total: number | null): string {
  if (total === null) return 'In progress';
  const m = Math.floor(total / 60);
  return m > 0 ? `${m} min ${total % 60} s` : `${total} s`;
}

/** The call log: every call of every assistant, newest first, filtered from the address (so a filter is a link). */
export function CallLogPage() {
  const route = useRoute();
  const filters = filtersOf(route.search);
  const [draft, setDraft] = useState<Filters>(filters);
  const [more, setMore] = useState<{ items: CallLogEntry[]; cursor: string | null } | null>(null);
  const query = queryOf(filters);
  const key = JSON.stringify(query);
  const assistants = useLoad(() => v1.GET('/api/v1/assistants', { params: { query: { limit: 100 } } }), []);
  const load = useLoad(async () => {
    setMore(null);
    return v1.GET('/api/v1/call-log', { params: { query: { ...query, limit: 50 } } });
  }, [key]);
  const next = useAction(async (cursor: string) => {
    const page = await v1.GET('/api/v1/call-log', { params: { query: { ...query, limit: 50, cursor } } });
    setMore((m) => ({ items: [...(m?.items ?? []), ...page.calls], cursor: page.nextCursor }));
  });
  const set = (patch: Partial<Filters>) => setDraft({ ...draft, ...patch });
  const apply = (f: Filters) => {
    const qs = new URLSearchParams(queryOf(f)).toString();
    navigate(`/call-log${qs ? `?${qs}` : ''}`, { replace: true });
  };
  return (
    <section>
      <h1 tabIndex={-1}>Call log</h1>
      <section class="card" aria-label="Call log">
        <form
          class="filters"
          role="search"
          aria-label="Call filters"
          onSubmit={(e) => {
            e.preventDefault();
            apply(draft);
          }}
        >
          <label>
            Assistant
            <select value={draft.assistantId} onChange={(e) => set({ assistantId: e.currentTarget.value })}>
              <option value="">All assistants</option>
              {assistants.state === 'ready' &&
                assistants.data.assistants.map((a) => <option value={a.publicId}>{a.name}</option>)}
            </select>
          </label>
          <label>
            Channel
            <select value={draft.transport} onChange={(e) => set({ transport: e.currentTarget.value })}>
              <option value="">Every channel</option>
              <option value="webrtc">Browser (WebRTC)</option>
              <option value="websocket">WebSocket</option>
              <option value="phone">Phone</option>
            </select>
          </label>
          <label>
            Phone number
            <input
              type="search"
              inputMode="tel"
              maxLength={40}
              value={draft.phoneNumber}
              placeholder="Caller or your number"
              onInput={(e) => set({ phoneNumber: e.currentTarget.value })}
            />
          </label>
          <label>
            End reason
            <select value={draft.endReason} onChange={(e) => set({ endReason: e.currentTarget.value })}>
              <option value="">Any</option>
              {END_REASONS.map((r) => (
                <option value={r}>{endReasonWords(r)}</option>
              ))}
            </select>
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
              Filter
            </button>
            <button
              type="button"
              onClick={() => {
                const none = filtersOf(new URLSearchParams());
                setDraft(none);
                apply(none);
              }}
            >
              Clear
            </button>
          </div>
        </form>
        <Loaded load={load} label="Loading calls…">
          {(page) => {
            const all = [...page.calls, ...(more?.items ?? [])];
            const cursor = more ? more.cursor : page.nextCursor;
            if (all.length === 0)
              return (
                <Empty>
                  <p>
                    {Object.keys(query).length > 0
                      ? 'No call matches these filters.'
                      : 'No calls yet. Open an assistant and press “Talk to it”, or use its playground.'}
                  </p>
                </Empty>
              );
            return (
              <>
                <CallTable calls={all} />
                {cursor && (
                  <button type="button" disabled={next.busy} onClick={() => void next.run(cursor)}>
                    Load more calls
                  </button>
                )}
                <ErrorBox error={next.error} />
              </>
            );
          }}
        </Loaded>
      </section>
    </section>
  );
}

function CallTable({ calls }: { calls: CallLogEntry[] }) {
  return (
    <Table columns={['Started', 'Assistant', 'Channel', 'Caller', 'Duration', 'Ended', 'Latency p50', 'Cost']}>
      {calls.map((c) => (
        <tr>
          <td>
            {c.conversationId ? (
              <a
                href={href(
                  `/assistants/${encodeURIComponent(c.assistantPublicId)}/conversations/${encodeURIComponent(c.conversationId)}`,
                )}
              >
                {dateTime(c.startedAt)}
              </a>
            ) : (
              dateTime(c.startedAt)
            )}
          </td>
          <td>{c.assistantName}</td>
          <td>
            {c.transport === 'webrtc' ? 'Browser' : c.transport === 'phone' ? 'Phone' : (c.transport ?? c.source)}
          </td>
          <td>{c.callerNumber ?? <span class="muted">{c.source}</span>}</td>
          <td>{seconds(c.durationSeconds)}</td>
          <td>{c.endReason === null ? 'In progress' : endReasonWords(c.endReason)}</td>
          <td>{c.latencyP50Ms === null ? '—' : `${c.latencyP50Ms} ms`}</td>
          <td>{dollars(c.costMicros)}</td>
        </tr>
      ))}
    </Table>
  );
}
