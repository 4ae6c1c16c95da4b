-- 0007 usage roll-ups: the dashboard's usage report reads per-period totals instead of scanning raw usage events
-- (an account with 1,000,000 events in a period answered GET /api/v1/account/usage/by-assistant by
-- aggregating all of them on every request). Forward-only: never edit after release; add 00NN instead.

-- Totals of one account's usage events per period and assistant ('' for events without an assistant: a primary key
-- cannot hold null). Kept by the trigger below in the same transaction as the event write, so it is exactly the
-- aggregate of usage_events at every commit: cost, requests (reservations that count as a request and were not
-- released), tokens and the number of events.
create table usage_period_assistant_totals (
  account_id     text        not null references hosting_accounts (account_id) on delete cascade,
  period_start   timestamptz not null,
  assistant_key  text        not null,
  cost_micros    bigint      not null default 0,
  request_count  bigint      not null default 0,
  input_tokens   bigint      not null default 0,
  output_tokens  bigint      not null default 0,
  events         bigint      not null default 0,
  primary key (account_id, period_start, assistant_key)
);

create function usage_totals_apply(ev usage_events, sign integer) returns void language plpgsql as $$
declare
  counted boolean;
begin
  select r.counts_as_request into counted from usage_reservations r where r.id = ev.reservation_id;
  insert into usage_period_assistant_totals as t
    (account_id, period_start, assistant_key, cost_micros, request_count, input_tokens, output_tokens, events)
  values (ev.account_id, ev.period_start, coalesce(ev.assistant_id, ''), sign * ev.cost_micros,
          sign * (case when coalesce(counted, false) and ev.outcome <> 'released' then 1 else 0 end),
          sign * ev.input_tokens, sign * ev.output_tokens, sign)
  on conflict (account_id, period_start, assistant_key) do update set
    cost_micros = t.cost_micros + excluded.cost_micros,
    request_count = t.request_count + excluded.request_count,
    input_tokens = t.input_tokens + excluded.input_tokens,
    output_tokens = t.output_tokens + excluded.output_tokens,
    events = t.events + excluded.events;
end $$;

-- An event is inserted once per reservation and updated at most once (expired -> settled); both, and deletes,
-- move the totals by the difference.
create function usage_totals_track() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then perform usage_totals_apply(old, -1); end if;
  if tg_op in ('INSERT', 'UPDATE') then perform usage_totals_apply(new, 1); end if;
  return null;
end $$;

create trigger usage_events_totals after insert or update or delete on usage_events
  for each row execute function usage_totals_track();

-- Existing events.
insert into usage_period_assistant_totals (account_id, period_start, assistant_key, cost_micros, request_count, input_tokens, output_tokens, events)
select e.account_id, e.period_start, coalesce(e.assistant_id, ''),
       coalesce(sum(e.cost_micros), 0), count(*) filter (where r.counts_as_request and e.outcome <> 'released'),
       coalesce(sum(e.input_tokens), 0), coalesce(sum(e.output_tokens), 0), count(*)
from usage_events e join usage_reservations r on r.id = e.reservation_id
group by 1, 2, 3;
