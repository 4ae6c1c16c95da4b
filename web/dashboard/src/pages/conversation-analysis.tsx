import type { ConversationDetail } from '../api/client.js';
import { dollars } from '../ui/format.js';

type Analysis = NonNullable<ConversationDetail['analysis']>;

function verdictText(success: NonNullable<Analysis['successEvaluation']>): string {
  if (typeof success.verdict === 'boolean') return success.verdict ? 'Succeeded' : 'Did not succeed';
  if (typeof success.verdict === 'number') return `${success.verdict} / 10`;
  return success.verdict;
}

function valueText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value);
}

/** What was read from the conversation once it ended: summary, verdict, sentiment and fields, above the transcript. */
export function AnalysisPanel({ analysis }: { analysis: Analysis }) {
  const missing = analysis.steps.filter((s) => s.status !== 'ok');
  return (
    <div class="analysis" role="group" aria-label="Analysis">
      <h3>Analysis</h3>
      <p class="muted small">
        {analysis.status === 'pending' ? 'Being analysed… ' : ''}
        {analysis.engine === 'local'
          ? 'Offline analysis: quotes, patterns and word lists, no language model.'
          : analysis.engine !== null
            ? `By ${analysis.model ?? 'the chat model'}, for ${dollars(analysis.costMicros)}.`
            : ''}
      </p>
      {analysis.summary !== null && <p>{analysis.summary}</p>}
      <dl class="stats">
        {analysis.successEvaluation !== null && (
          <div>
            <dt>Verdict</dt>
            <dd title={analysis.successEvaluation.rationale}>{verdictText(analysis.successEvaluation)}</dd>
          </div>
        )}
        {analysis.sentiment !== null && (
          <div>
            <dt>Sentiment</dt>
            <dd>{analysis.sentiment.label}</dd>
          </div>
        )}
        {Object.entries(analysis.structuredData ?? {}).map(([name, value]) => (
          <div>
            <dt>{name}</dt>
            <dd>{valueText(value)}</dd>
          </div>
        ))}
      </dl>
      {missing.map((s) => (
        <p class="muted small">
          {s.step}: {s.status === 'timed_out' ? 'timed out' : s.status === 'skipped' ? 'not run' : 'failed'} ({s.reason}
          )
        </p>
      ))}
    </div>
  );
}
