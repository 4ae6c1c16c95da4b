import { dashboardApi, type DailyUsage } from '../api/dashboard-routes.js';
import { BarChart } from '../ui/chart.js';
import { Loaded, useLoad } from '../ui/components.js';
import { date, dollars, minutes } from '../ui/format.js';
import { BudgetBanner, BudgetForm, ForecastChart, forecastSentence } from './usage-budget.js';

/** The days of the current period from the per-day roll-up: every day, the whole period, voice included. */
function dailySeries(daily: DailyUsage) {
  return {
    days: daily.days.map((d) => d.date),
    spend: daily.days.map((d) => d.costMicros),
    voiceSeconds: daily.days.map((d) => d.voiceSeconds),
  };
}

/** A cap as shown: "no cap" when none applies (a self-hosted server). */
function capped(value: number | null, format: (n: number) => string): string {
  return value === null ? 'no cap' : format(value);
}

function Meter({ label, used, limit, text }: { label: string; used: number; limit: number | null; text: string }) {
  return (
    <div class="meter-row">
      <div class="meter-head">
        <span>{label}</span>
        <span>{text}</span>
      </div>
      {limit !== null && limit > 0 && <progress max={limit} value={Math.min(used, limit)} aria-label={label} />}
    </div>
  );
}

/**
 * What the account spent and may still spend this period: the summary, the threshold banner, the forecast (chart and
 * sentence), the daily roll-up and the budget settings. Every figure comes from the same ledger.
 */
export function UsagePage() {
  const load = useLoad(async () => {
    const [{ summary }, daily, { forecast }, { budget }] = await Promise.all([
      dashboardApi.usageSummary(),
      dashboardApi.usageDaily(),
      dashboardApi.usageForecast(),
      dashboardApi.budget(),
    ]);
    return { summary, daily, forecast, budget };
  }, []);
  return (
    <section>
      <h1 tabIndex={-1}>Usage</h1>
      <Loaded load={load} label="Loading usage…">
        {({ summary: s, daily, forecast, budget }) => {
          const series = dailySeries(daily);
          const v = s.voice;
          return (
            <div class="stack">
              <BudgetBanner budget={budget} />
              <section class="card" aria-labelledby="period-h">
                <h2 id="period-h">
                  Current period: {date(s.periodStart)} – {date(s.periodEnd)}
                </h2>
                {s.selfHosted ? (
                  <p class="muted">
                    Self-hosted server: no plan limit applies, so there is no cap. Usage is recorded; only hosted
                    providers cost money (the local voice, local answers and document ingestion cost $0).
                  </p>
                ) : (
                  <p class="muted">
                    Plan <strong>{s.planCode}</strong> · account {s.status} · enforcement {s.enforcement}
                    {s.enforcement === 'shadow' && ' (usage is recorded, nothing is refused)'}
                  </p>
                )}
                <dl class="stats">
                  <div>
                    <dt>Budget used</dt>
                    <dd>{dollars(s.consumedMicros)}</dd>
                  </div>
                  <div>
                    <dt>Budget limit</dt>
                    <dd>{capped(s.limitMicros, dollars)}</dd>
                  </div>
                  <div>
                    <dt>Budget remaining</dt>
                    <dd>{capped(s.remainingMicros, dollars)}</dd>
                  </div>
                  <div>
                    <dt>Requests</dt>
                    <dd>
                      {s.requestCount} / {s.monthlyRequestCap ?? 'unlimited'}
                    </dd>
                  </div>
                  <div>
                    <dt>Voice minutes used</dt>
                    <dd>
                      {minutes(v.voiceSecondsUsed)} / {capped(v.voiceSecondsLimit, minutes)}
                    </dd>
                  </div>
                  <div>
                    <dt>Voice minutes reserved</dt>
                    <dd>{minutes(v.voiceSecondsReserved)}</dd>
                  </div>
                  <div>
                    <dt>Playground voice minutes</dt>
                    <dd>
                      {minutes(v.playgroundVoiceSeconds)}
                      {v.playgroundVoiceSeconds > 0 && ` (${v.playgroundVoiceSeconds} s)`}
                    </dd>
                  </div>
                </dl>
                <Meter
                  label="Budget"
                  used={s.consumedMicros + s.reservedMicros}
                  limit={s.limitMicros}
                  text={`${dollars(s.consumedMicros)} of ${capped(s.limitMicros, dollars)}${s.reservedMicros ? ` (+${dollars(s.reservedMicros)} reserved)` : ''}`}
                />
                <Meter
                  label="Requests"
                  used={s.requestCount}
                  limit={s.monthlyRequestCap}
                  text={`${s.requestCount} of ${s.monthlyRequestCap ?? 'unlimited'}`}
                />
                <Meter
                  label="Voice minutes"
                  used={v.voiceSecondsUsed + v.voiceSecondsReserved}
                  limit={v.voiceSecondsLimit}
                  text={`${minutes(v.voiceSecondsUsed)} of ${capped(v.voiceSecondsLimit, minutes)} min`}
                />
              </section>
              <section class="card" aria-labelledby="forecast-h">
                <h2 id="forecast-h">Forecast</h2>
                <p class="forecast-sentence">{forecastSentence(forecast)}</p>
                <ForecastChart forecast={forecast} daily={daily} />
              </section>
              <section class="card" aria-labelledby="daily-h">
                <h2 id="daily-h">Daily</h2>
                <p class="muted small">
                  Every day of this period: {dollars(daily.totalMicros)} in all, chat, documents and voice.
                </p>
                <BarChart
                  title="Spend per day"
                  labels={series.days}
                  values={series.spend}
                  format={dollars}
                  unit="spend"
                />
                <BarChart
                  title="Voice minutes per day"
                  labels={series.days}
                  values={series.voiceSeconds}
                  format={minutes}
                  unit="minutes"
                />
              </section>
              <BudgetForm budget={budget} onSaved={load.reload} />
            </div>
          );
        }}
      </Loaded>
    </section>
  );
}
