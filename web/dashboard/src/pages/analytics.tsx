import { useState } from 'preact/hooks';
import { v1, type Assistant } from '../api/client.js';
import { BarChart } from '../ui/chart.js';
import { VoiceLatencyChart } from '../ui/latency-chart.js';
import { Empty, Loaded, useLoad } from '../ui/components.js';
import { dateTime, percent } from '../ui/format.js';

/** Totals, answer outcomes, feedback, a daily series and the questions left unanswered, for a chosen range. */
export function AnalyticsTab({ assistant }: { assistant: Assistant }) {
  const [days, setDays] = useState(30);
  const load = useLoad(() => {
    const from = new Date(Date.now() - days * 86_400_000).toISOString();
    return v1.GET('/api/v1/analytics', { params: { query: { assistantId: assistant.id, from } } });
  }, [assistant.id, days]);
  return (
    <section class="card" aria-labelledby="an-h">
      <div class="page-head">
        <h2 id="an-h">Analytics</h2>
        <label class="inline">
          Range
          <select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            <option value={7}>Last 7 days</option>
            <option value={30}>Last 30 days</option>
            <option value={90}>Last 90 days</option>
          </select>
        </label>
      </div>
      <Loaded load={load} label="Loading analytics…">
        {({ metrics, daily, topUnanswered }) => (
          <>
            <dl class="stats">
              <div>
                <dt>Conversations</dt>
                <dd>{metrics.conversations}</dd>
              </div>
              <div>
                <dt>Messages</dt>
                <dd>{metrics.messages}</dd>
              </div>
              <div>
                <dt>Answered</dt>
                <dd>{percent(metrics.answeredRate)}</dd>
              </div>
              <div>
                <dt>No answer</dt>
                <dd>{percent(metrics.noAnswerRate)}</dd>
              </div>
              <div>
                <dt>Model failures</dt>
                <dd>{metrics.modelFailures}</dd>
              </div>
              <div>
                <dt>Success (analysed)</dt>
                <dd>
                  {percent(metrics.analysis.successRate)}{' '}
                  <span class="muted">
                    {metrics.analysis.passed} passed, {metrics.analysis.failed} failed
                  </span>
                </dd>
              </div>
              <div>
                <dt>Sentiment</dt>
                <dd>
                  {metrics.analysis.sentiment.positive} positive, {metrics.analysis.sentiment.neutral} neutral,{' '}
                  {metrics.analysis.sentiment.negative} negative
                </dd>
              </div>
              <div>
                <dt>Feedback</dt>
                <dd>
                  <span class="feedback-count">
                    <ThumbIcon up /> {metrics.feedback.positive} helpful
                  </span>{' '}
                  <span class="feedback-count">
                    <ThumbIcon up={false} /> {metrics.feedback.negative} not helpful
                  </span>
                </dd>
              </div>
            </dl>
            <BarChart
              title="Messages per day"
              labels={daily.map((d) => d.date)}
              values={daily.map((d) => d.messages)}
              format={String}
              unit="messages"
            />
            <BarChart
              title="Success rate per day (of analysed conversations with a verdict; none shows 0%)"
              labels={daily.map((d) => d.date)}
              values={daily.map((d) => d.analysis.successRate ?? 0)}
              format={percent}
              unit="passed"
            />
            <BarChart
              title="Positive sentiment per day (share of analysed conversations)"
              labels={daily.map((d) => d.date)}
              values={daily.map((d) => positiveShare(d.analysis.sentiment))}
              format={percent}
              unit="positive"
            />
            <BarChart
              title="Negative sentiment per day (conversations)"
              labels={daily.map((d) => d.date)}
              values={daily.map((d) => d.analysis.sentiment.negative)}
              format={String}
              unit="negative"
            />
            <h3>Top unanswered questions</h3>
            {topUnanswered.length === 0 ? (
              <Empty>
                <p>Nothing unanswered in this range.</p>
              </Empty>
            ) : (
              <ol>
                {topUnanswered.map((q) => (
                  <li>
                    {q.question}{' '}
                    <span class="muted">
                      ({q.count}×, last {dateTime(q.lastAskedAt)})
                    </span>
                  </li>
                ))}
              </ol>
            )}
          </>
        )}
      </Loaded>
      <VoiceLatencyChart assistantId={assistant.id} />
    </section>
  );
}

function positiveShare(s: { positive: number; neutral: number; negative: number }): number {
  const all = s.positive + s.neutral + s.negative;
  return all === 0 ? 0 : s.positive / all;
}

/** An inline SVG thumb (emoji need a font that is not installed everywhere); the words beside it carry the meaning. */
function ThumbIcon({ up }: { up: boolean }) {
  return (
    <svg
      class={up ? 'icon' : 'icon down'}
      width="16"
      height="16"
      viewBox="0 0 24 24"
      aria-hidden="true"
      focusable="false"
    >
      <path
        fill="currentColor"
        d="M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3c0-.4-.2-.8-.4-1.1L13.2 1 6.6 7.6C6.2 8 6 8.5 6 9v10a2 2 0 0 0 2 2h9c.8 0 1.5-.5 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z"
      />
    </svg>
  );
}
