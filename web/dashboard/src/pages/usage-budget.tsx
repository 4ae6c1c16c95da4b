import { useState } from 'preact/hooks';
import { dashboardApi, type Budget, type DailyUsage, type UsageForecast } from '../api/dashboard-routes.js';
import { ErrorBox, useAction } from '../ui/components.js';
import { date, dateTime, dollars } from '../ui/format.js';

/** What the forecast says in words: when the money runs out at the current pace, or that it lasts. */
export function forecastSentence(f: UsageForecast): string {
  const budget = dollars(f.budgetMicros);
  if (f.projectedExhaustionAt === null)
    return `At the current pace this period ends at about ${dollars(f.projectedMicros)}: the budget of ${budget} lasts until ${date(f.periodEnd)}.`;
  if (Date.parse(f.projectedExhaustionAt) <= Date.now() + 60_000) return `The budget of ${budget} is used up.`;
  return `At the current pace the budget of ${budget} runs out on ${dateTime(f.projectedExhaustionAt)}, before the period ends on ${date(f.periodEnd)}.`;
}

/**
 * Spend so far (cumulative, day by day), the linear projection to the period's end and the budget line, as inline
 * SVG (no library, no inline style), with the figures in a table twin.
 */
export function ForecastChart({ forecast: f, daily }: { forecast: UsageForecast; daily: DailyUsage }) {
  const start = Date.parse(f.periodStart);
  const end = Date.parse(f.periodEnd);
  const now = Math.min(Math.max(Date.now(), start), end);
  const w = 640;
  const h = 160;
  const top = Math.max(f.budgetMicros, f.projectedMicros, f.spentMicros, 1) * 1.08;
  const x = (t: number) => ((t - start) / (end - start)) * w;
  const y = (micros: number) => h - (micros / top) * (h - 4);
  const spent: Array<[number, number]> = [[start, 0]];
  let sum = 0;
  for (const day of daily.days) {
    sum += day.costMicros;
    const dayEnd = Math.min(Date.parse(`${day.date}T00:00:00Z`) + 86_400_000, now);
    if (dayEnd > start) spent.push([dayEnd, sum]);
  }
  const line = (points: Array<[number, number]>) => points.map(([t, m]) => `${x(t)},${y(m)}`).join(' ');
  const label = `Spent ${dollars(f.spentMicros)} so far, projected ${dollars(f.projectedMicros)} by ${date(f.periodEnd)}, budget ${dollars(f.budgetMicros)}`;
  return (
    <figure class="chart forecast-chart">
      <figcaption>Spend this period and where it is heading</figcaption>
      <svg viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={label}>
        <line x1={0} y1={h} x2={w} y2={h} class="axis" />
        <line x1={0} y1={y(f.budgetMicros)} x2={w} y2={y(f.budgetMicros)} class="budget-line">
          <title>{`Budget ${dollars(f.budgetMicros)}`}</title>
        </line>
        <polyline points={line([...spent.slice(-1), [end, f.projectedMicros]])} class="projection-line">
          <title>{`Projected ${dollars(f.projectedMicros)}`}</title>
        </polyline>
        <polyline points={line(spent)} class="spent-line">
          <title>{`Spent ${dollars(f.spentMicros)}`}</title>
        </polyline>
      </svg>
      <div class="chart-axis" aria-hidden="true">
        <span>{date(f.periodStart)}</span>
        <span>{date(f.periodEnd)}</span>
      </div>
      <ul class="chart-legend">
        <li class="legend-spent">Spent so far {dollars(f.spentMicros)}</li>
        <li class="legend-projection">
          Projected {dollars(f.projectedMicros)}
          {f.liveExposureMicros > 0 && ` (incl. ${dollars(f.liveExposureMicros)} held by live calls and streams)`}
        </li>
        <li class="legend-budget">Budget {dollars(f.budgetMicros)}</li>
      </ul>
    </figure>
  );
}

/** The threshold banner: the highest threshold crossed this period, shown until the period ends. */
export function BudgetBanner({ budget }: { budget: Budget }) {
  const top = budget.alerts[budget.alerts.length - 1];
  if (!top) return null;
  return (
    <p class="card notice budget-banner" role="status">
      <strong>{top.thresholdPercent}% of this period’s budget used.</strong> {dollars(budget.spentMicros)} of{' '}
      {dollars(budget.effective.budgetMicros)} spent; the {top.thresholdPercent}% mark was crossed on{' '}
      {dateTime(top.crossedAt)}
      {top.thresholdPercent >= 100
        ? ': new paid requests are refused and live calls end until the period renews.'
        : '.'}
    </p>
  );
}

const SOURCE_TEXT: Record<Budget['effective']['source'], string> = {
  plan: 'your plan',
  operator_override: 'an operator override of your plan',
  hard_limit: 'your hard limit',
};

/** Alert thresholds and the hard limit (PUT /api/v1/account/budget). */
export function BudgetForm({ budget, onSaved }: { budget: Budget; onSaved: () => Promise<void> }) {
  const [thresholds, setThresholds] = useState(budget.alertThresholdsPercent.join(', '));
  const [limit, setLimit] = useState(budget.hardLimitMicros === null ? '' : String(budget.hardLimitMicros / 1_000_000));
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    const list = thresholds
      .split(/[,\s]+/)
      .filter((v) => v !== '')
      .map(Number);
    await dashboardApi.setBudget({
      alertThresholdsPercent: list,
      hardLimitMicros: limit.trim() === '' ? null : Math.round(Number(limit) * 1_000_000),
    });
    await onSaved();
    setSaved(true);
  });
  const e = budget.effective;
  return (
    <form
      class="card form"
      aria-label="Budget settings"
      onSubmit={(ev) => {
        ev.preventDefault();
        void save.run();
      }}
    >
      <h2>Budget and alerts</h2>
      <p class="muted">
        This period’s budget is <strong>{dollars(e.budgetMicros)}</strong>, set by {SOURCE_TEXT[e.source]} (plan budget{' '}
        {dollars(e.planBudgetMicros)}
        {e.limitOverrideMicros !== null && `, override ${dollars(e.limitOverrideMicros)}`}
        {e.creditMicros > 0 && `, credit ${dollars(e.creditMicros)}`}).
      </p>
      <label>
        Alert at these percentages of the budget (up to 5, each once per period)
        <input value={thresholds} inputMode="numeric" onInput={(ev) => setThresholds(ev.currentTarget.value)} />
      </label>
      <label>
        Hard limit in dollars (empty: none; at most the plan budget)
        <input
          value={limit}
          inputMode="decimal"
          placeholder="none"
          onInput={(ev) => setLimit(ev.currentTarget.value)}
        />
      </label>
      <div>
        <button type="submit" disabled={save.busy}>
          Save
        </button>
        {saved && (
          <span role="status" class="muted">
            {' '}
            Saved.
          </span>
        )}
      </div>
      {save.error !== undefined && <ErrorBox error={save.error} title="Could not save" />}
    </form>
  );
}
