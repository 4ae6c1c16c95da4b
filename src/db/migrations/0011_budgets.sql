-- 0011 budgets: the owner's budget settings (alert thresholds, a hard limit), one row per threshold crossed in a
-- period, a per-day usage roll-up kept by the usage_events trigger, and the conversation a chat reservation belongs
-- to (cost per conversation from the ledger). Forward-only: never edit after release; add 00NN instead.

-- Owner budget settings. The effective budget is the smaller of the plan budget (or operator override, plus credit)
-- and budget_hard_limit_micros; thresholds are percentages of it, each firing once per period.
alter table hosting_accounts
  add column budget_alert_thresholds integer[] not null default '{50,80,100}',
  add column budget_hard_limit_micros bigint check (budget_hard_limit_micros is null or budget_hard_limit_micros >= 0);

-- One row per (account, period, threshold) crossed: the primary key decides which of several concurrent writers
-- records the crossing (and emits its event). Raising the budget above spend deletes the rows now below it (re-arm).
create table budget_alerts (
  account_id         text        not null references hosting_accounts (account_id) on delete cascade,
  period_start       timestamptz not null,
  threshold_percent  integer     not null check (threshold_percent between 1 and 100),
  period_end         timestamptz not null,
  spent_micros       bigint      not null,
  budget_micros      bigint      not null,
  projected_micros   bigint      not null,
  created_at         timestamptz not null default now(),
  primary key (account_id, period_start, threshold_percent)
);

-- The conversation a chat reservation was made for (null for ingestion, evals, voice: a voice grant reaches its
-- conversation through its voice session).
alter table usage_reservations add column conversation_id text;
create index usage_reservations_conversation on usage_reservations (conversation_id) where conversation_id is not null;
create index usage_reservations_voice_session on usage_reservations (voice_session_id) where voice_session_id is not null;

-- Totals of usage events per account, UTC day, period, assistant ('' for none), source and kind. The day is the
-- event's, clamped into its period (a late settle after the period ended still counts on the period's last day), so
-- the days of a period add up to exactly the period's totals.
create table usage_daily_totals (
  account_id     text        not null references hosting_accounts (account_id) on delete cascade,
  day            date        not null,
  period_start   timestamptz not null,
  assistant_key  text        not null,
  source         text        not null,
  kind           text        not null,
  cost_micros    bigint      not null default 0,
  request_count  bigint      not null default 0,
  input_tokens   bigint      not null default 0,
  output_tokens  bigint      not null default 0,
  units          bigint      not null default 0,
  events         bigint      not null default 0,
  primary key (account_id, day, period_start, assistant_key, source, kind)
);

-- The day an event counts on: its UTC date, clamped into [period_start, period_end).
create function usage_event_day(ev usage_events) returns date language sql stable as $$
  select ((greatest(ev.period_start, least(ev.created_at, coalesce(
            (select b.period_end from usage_balances b where b.account_id = ev.account_id and b.period_start = ev.period_start),
            ev.created_at + interval '1 microsecond') - interval '1 microsecond'))) at time zone 'utc')::date
$$;

-- Replaces 0007's function: the per-period totals as before, and the per-day totals beside them, from one lookup.
create or replace function usage_totals_apply(ev usage_events, sign integer) returns void language plpgsql as $$
declare
  counted boolean;
  requests integer;
begin
  select r.counts_as_request into counted from usage_reservations r where r.id = ev.reservation_id;
  requests := case when coalesce(counted, false) and ev.outcome <> 'released' then 1 else 0 end;
  insert into usage_period_assistant_totals as t
    (account_id, period_start, assistant_key, cost_micros, request_count, input_tokens, output_tokens, events)
  values (ev.account_id, ev.period_start, coalesce(ev.assistant_id, ''), sign * ev.cost_micros, sign * requests,
          sign * ev.input_tokens, sign * ev.output_tokens, sign)
  on conflict (account_id, period_start, assistant_key) do update set
    cost_micros = t.cost_micros + excluded.cost_micros,
    request_count = t.request_count + excluded.request_count,
    input_tokens = t.input_tokens + excluded.input_tokens,
    output_tokens = t.output_tokens + excluded.output_tokens,
    events = t.events + excluded.events;
  insert into usage_daily_totals as d
    (account_id, day, period_start, assistant_key, source, kind, cost_micros, request_count, input_tokens, output_tokens, units, events)
  values (ev.account_id, usage_event_day(ev), ev.period_start, coalesce(ev.assistant_id, ''), ev.source, ev.kind,
          sign * ev.cost_micros, sign * requests, sign * ev.input_tokens, sign * ev.output_tokens, sign * ev.units, sign)
  on conflict (account_id, day, period_start, assistant_key, source, kind) do update set
    cost_micros = d.cost_micros + excluded.cost_micros,
    request_count = d.request_count + excluded.request_count,
    input_tokens = d.input_tokens + excluded.input_tokens,
    output_tokens = d.output_tokens + excluded.output_tokens,
    units = d.units + excluded.units,
    events = d.events + excluded.events;
end $$;

-- Existing events.
insert into usage_daily_totals (account_id, day, period_start, assistant_key, source, kind, cost_micros, request_count,
                                input_tokens, output_tokens, units, events)
select e.account_id, usage_event_day(e), e.period_start, coalesce(e.assistant_id, ''), e.source, e.kind,
       coalesce(sum(e.cost_micros), 0), count(*) filter (where r.counts_as_request and e.outcome <> 'released'),
       coalesce(sum(e.input_tokens), 0), coalesce(sum(e.output_tokens), 0), coalesce(sum(e.units), 0), count(*)
from usage_events e join usage_reservations r on r.id = e.reservation_id
group by 1, 2, 3, 4, 5, 6;

-- Voice spend counts toward the budget from now on (one ledger: budget used = the sum of the usage events). The
-- balances of periods still open take in the voice cost recorded so far.
update usage_balances set consumed_micros = consumed_micros + voice_cost_micros
where voice_cost_micros > 0 and period_end > now();
