import { useState } from 'preact/hooks';
import { v1, type Overview } from '../api/client.js';
import { href } from '../router.js';
import { Empty, Loaded, Table, useLoad } from '../ui/components.js';
import { date, dollars, minutes, percent } from '../ui/format.js';
import { endReasonWords } from './call-log.js';

const today = () => new Date().toISOString().slice(0, 10);
const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);

/**
 * The home page after sign-in: the day's calls and chats across every assistant, how questions were answered, how
 * long callers waited, what it cost and how calls ended, then the same per assistant.
 */
export function OverviewPage() {
  const [day, setDay] = useState(today());
  const load = useLoad(() => v1.GET('/api/v1/overview', { params: { query: { date: day } } }), [day]);
  return (
    <section>
      <div class="page-head">
        <h1 tabIndex={-1}>Overview</h1>
        <label class="inline">
          Day (UTC)
          <input
            type="date"
            value={day}
            max={today()}
            onChange={(e) => e.currentTarget.value && setDay(e.currentTarget.value)}
          />
        </label>
      </div>
      <Loaded load={load} label="Loading the overview…">
        {(o) => <OverviewBody o={o} />}
      </Loaded>
    </section>
  );
}

function OverviewBody({ o }: { o: Overview }) {
  const nothing = o.calls + o.chats + o.questions === 0;
  return (
    <div class="stack">
      <section class="card" aria-labelledby="ov-day-h">
        <h2 id="ov-day-h">{o.date === today() ? 'Today' : date(o.from)}</h2>
        <dl class="stats">
          <div>
            <dt>Calls</dt>
            <dd>
              <a href={href(`/call-log?from=${o.date}&to=${o.date}`)}>{o.calls}</a>
            </dd>
          </div>
          <div>
            <dt>Chats</dt>
            <dd>{o.chats}</dd>
          </div>
          <div>
            <dt>Answered</dt>
            <dd title={`${o.answered} of ${o.questions} questions`}>{percent(o.answeredRate)}</dd>
          </div>
          <div>
            <dt>Turn latency p50</dt>
            <dd>{ms(o.turnLatency.p50Ms)}</dd>
          </div>
          <div>
            <dt>Turn latency p95</dt>
            <dd>{ms(o.turnLatency.p95Ms)}</dd>
          </div>
          <div>
            <dt>Spend</dt>
            <dd>{dollars(o.spend.costMicros)}</dd>
          </div>
          <div>
            <dt>Call minutes</dt>
            <dd>{minutes(o.billableSeconds)}</dd>
          </div>
        </dl>
        {nothing && (
          <Empty>
            <p>
              Nothing yet on this day. Open an assistant and use its playground, or{' '}
              <a href={href('/assistants')}>create an assistant</a>.
            </p>
          </Empty>
        )}
        <p class="muted">
          {o.questions} questions, {o.answered} answered, {o.noAnswer} not answered by the documents
          {o.modelFailures > 0 ? `, ${o.modelFailures} model failures` : ''}; latency over {o.turnLatency.turns} voice
          turns (end of the caller’s speech to the first answer audio). Spend counts hosted providers only: what runs on
          this server costs $0.
        </p>
      </section>
      <div class="stack">
        <section class="card" aria-labelledby="ov-end-h">
          <h2 id="ov-end-h">How calls ended</h2>
          {o.endReasons.length === 0 ? (
            <p class="muted">No finished calls.</p>
          ) : (
            <ul>
              {o.endReasons.map((r) => (
                <li>
                  <a href={href(`/call-log?endReason=${r.reason}&from=${o.date}&to=${o.date}`)}>
                    {endReasonWords(r.reason)}
                  </a>
                  : {r.count}
                </li>
              ))}
            </ul>
          )}
        </section>
        <section class="card" aria-labelledby="ov-spend-h">
          <h2 id="ov-spend-h">Spend by kind</h2>
          {o.spend.byKind.length === 0 ? (
            <p class="muted">Nothing billed.</p>
          ) : (
            <ul>
              {o.spend.byKind.map((k) => (
                <li>
                  {k.kind}: {dollars(k.costMicros)}
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
      {o.assistants.length > 0 && (
        <section class="card" aria-labelledby="ov-asst-h">
          <h2 id="ov-asst-h">By assistant</h2>
          <Table columns={['Assistant', 'Calls', 'Chats', 'Answered', 'Spend']} label="The day per assistant">
            {o.assistants.map((a) => (
              <tr>
                <td>
                  <a href={href(`/assistants/${encodeURIComponent(a.publicId)}`)}>{a.name}</a>
                </td>
                <td>
                  <a href={href(`/call-log?assistantId=${a.publicId}&from=${o.date}&to=${o.date}`)}>{a.calls}</a>
                </td>
                <td>{a.chats}</td>
                <td>{percent(a.answeredRate)}</td>
                <td>{dollars(a.spendMicros)}</td>
              </tr>
            ))}
          </Table>
        </section>
      )}
    </div>
  );
}
