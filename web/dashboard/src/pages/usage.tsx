import { dashboardApi, type UsageEvent, type UsageSummary } from '../api/dashboard-routes.js';
import { BarChart } from '../ui/chart.js';
import { Loaded, useLoad } from '../ui/components.js';
import { date, dollars, minutes } from '../ui/format.js';

/** Days of the current period (UTC) with spend and voice seconds summed from the recent usage events. */
function dailySeries(summary: UsageSummary, events: UsageEvent[]) {
  const start = new Date(summary.periodStart);
  const end = new Date(Math.min(Date.now(), new Date(summary.periodEnd).getTime()));
  const days: string[] = [];
  for (
    let d = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
    d <= end.getTime();
    d += 86_400_000
  ) {
    days.push(new Date(d).toISOString().slice(0, 10));
  }
  const spend = new Map(days.map((d) => [d, 0]));
  const voice = new Map(days.map((d) => [d, 0]));
  for (const e of events) {
    const day = e.createdAt.slice(0, 10);
    if (!spend.has(day)) continue;
    spend.set(day, spend.get(day)! + e.costMicros);
    if (e.kind === 'voice') voice.set(day, voice.get(day)! + e.units);
  }
  return { days, spend: days.map((d) => spend.get(d)!), voiceSeconds: days.map((d) => voice.get(d)!) };
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

/** What the account spent and may still spend this period, from /api/v1/account/usage/summary. */
export function UsagePage() {
  const load = useLoad(async () => {
    const [{ summary }, { events }] = await Promise.all([dashboardApi.usageSummary(), dashboardApi.usageRecent(200)]);
    return { summary, events };
  }, []);
  return (
    <section>
      <h1 tabIndex={-1}>Usage</h1>
      <Loaded load={load} label="Loading usage…">
        {({ summary: s, events }) => {
          const series = dailySeries(s, events);
          const v = s.voice;
          return (
            <div class="stack">
              <section class="card" aria-labelledby="period-h">
                <h2 id="period-h">
                  Current period: {date(s.periodStart)} – {date(s.periodEnd)}
                </h2>
                <p class="muted">
                  Plan <strong>{s.planCode}</strong> · account {s.status} · enforcement {s.enforcement}
                  {s.enforcement === 'shadow' && ' (usage is recorded, nothing is refused)'}
                </p>
                <dl class="stats">
                  <div>
                    <dt>Budget used</dt>
                    <dd>{dollars(s.consumedMicros)}</dd>
                  </div>
                  <div>
                    <dt>Budget limit</dt>
                    <dd>{dollars(s.limitMicros)}</dd>
                  </div>
                  <div>
                    <dt>Budget remaining</dt>
                    <dd>{dollars(s.remainingMicros)}</dd>
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
                      {minutes(v.voiceSecondsUsed)} / {minutes(v.voiceSecondsLimit)}
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
                  text={`${dollars(s.consumedMicros)} of ${dollars(s.limitMicros)}${s.reservedMicros ? ` (+${dollars(s.reservedMicros)} reserved)` : ''}`}
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
                  text={`${minutes(v.voiceSecondsUsed)} of ${minutes(v.voiceSecondsLimit)} min`}
                />
              </section>
              <section class="card" aria-labelledby="daily-h">
                <h2 id="daily-h">Daily</h2>
                <p class="muted small">From the latest {events.length} usage events of this period.</p>
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
            </div>
          );
        }}
      </Loaded>
    </section>
  );
}
