-- 0004 metering: plan entitlements, billing periods with one balance row each, usage reservations and events,
-- billing (Polar) subscription state. Forward-only: never edit after release; add 00NN instead.
-- No extensions (PGlite runs this too). Money is integer micros (1,000,000 micros = $1) in bigint columns.

-- The enforceable limits of each plan, one row per plan (docs/design-decisions.md, Usage and plans). Operators
-- edit them; an account whose plan has no row falls back to HOSTED_USAGE_DEFAULT_LIMIT_MICROS for its budget.
-- Null caps mean "no cap" (an operator's choice; the seeded ladder caps everything).
create table plan_entitlements (
  plan_code               text        primary key check (plan_code in ('free', 'starter', 'pro', 'business')),
  budget_micros           bigint      not null check (budget_micros >= 0),
  max_assistants          integer     check (max_assistants is null or max_assistants >= 0),
  monthly_request_cap     integer     check (monthly_request_cap is null or monthly_request_cap >= 0),
  evals_enabled           boolean     not null default false,
  voice_minutes           integer     not null default 0 check (voice_minutes >= 0),
  voice_concurrent_calls  integer     not null default 1 check (voice_concurrent_calls >= 0),
  created_at              timestamptz not null default now(),
  updated_at              timestamptz not null default now()
);
create trigger plan_entitlements_touch before update on plan_entitlements for each row execute function touch_updated_at();

-- The default ladder, voice allowances included (docs/design-decisions.md, Usage and plans; Voice).
insert into plan_entitlements (plan_code, budget_micros, max_assistants, monthly_request_cap, evals_enabled, voice_minutes, voice_concurrent_calls) values
  ('free',       1000000,   1,    75, false,   10,  1),
  ('starter',   12000000,   5,  2000, false,  120,  2),
  ('pro',       45000000,  20, 15000, true,   600,  5),
  ('business', 150000000, 100, 50000, true,  2000, 10);

-- The hosting account gains what billing needs. `period_anchor` is the instant monthly periods are counted
-- from (the subscription's current period start when there is one); null means "from period_start".
alter table hosting_accounts
  add column period_anchor            timestamptz,
  add column billing_customer_id      text,
  add column billing_subscription_id  text,
  add column billing_subscription_status text,
  add column billing_product_id       text,
  add constraint hosting_accounts_plan_code check (plan_code in ('free', 'starter', 'pro', 'business'));

-- One row per account and billing period. Admission locks this row (SELECT ... FOR UPDATE) so concurrent
-- requests serialise per account and cannot overspend. credit_micros is operator credit for this period.
create table usage_balances (
  account_id               text        not null references hosting_accounts (account_id) on delete cascade,
  period_start             timestamptz not null,
  period_end               timestamptz not null,
  consumed_micros          bigint      not null default 0 check (consumed_micros >= 0),
  reserved_micros          bigint      not null default 0 check (reserved_micros >= 0),
  credit_micros            bigint      not null default 0 check (credit_micros >= 0),
  request_count            integer     not null default 0 check (request_count >= 0),
  voice_seconds_used       integer     not null default 0 check (voice_seconds_used >= 0),
  voice_seconds_reserved   integer     not null default 0 check (voice_seconds_reserved >= 0),
  playground_voice_seconds integer     not null default 0 check (playground_voice_seconds >= 0),
  voice_cost_micros        bigint      not null default 0 check (voice_cost_micros >= 0),
  created_at               timestamptz not null default now(),
  updated_at               timestamptz not null default now(),
  primary key (account_id, period_start)
);
create trigger usage_balances_touch before update on usage_balances for each row execute function touch_updated_at();

-- One row per metered request (chat, ingestion, eval) or voice grant. It moves open -> settled | released |
-- expired exactly once (guarded UPDATE ... where status = 'open'); a settle that arrives after the sweeper
-- expired the row still records the spend (expired -> settled), so no usage is ever lost.
create table usage_reservations (
  id                text        primary key,                 -- ures_...
  account_id        text        not null references hosting_accounts (account_id) on delete cascade,
  period_start      timestamptz not null,
  kind              text        not null check (kind in ('chat', 'ingestion', 'eval', 'voice')),
  source            text        not null check (source in ('api', 'widget', 'playground', 'dashboard', 'system')),
  assistant_id      text,
  voice_session_id  text,
  -- Micros held against the budget (0 for voice grants, which hold seconds).
  reserved_micros   bigint      not null default 0 check (reserved_micros >= 0),
  reserved_seconds  integer     not null default 0 check (reserved_seconds >= 0),
  -- Whether this request added one to the period's request count.
  counts_as_request boolean     not null default false,
  -- Whether the reservation was checked against the limits (enforce mode, not exempt).
  enforced          boolean     not null default false,
  -- Playground voice not counted toward the voice minutes (VOICE_QUOTA_EXEMPT_PLAYGROUND).
  quota_exempt      boolean     not null default false,
  status            text        not null default 'open' check (status in ('open', 'settled', 'released', 'expired')),
  created_at        timestamptz not null,
  closed_at         timestamptz,
  foreign key (account_id, period_start) references usage_balances (account_id, period_start) on delete cascade
);
create index usage_reservations_open on usage_reservations (created_at) where status = 'open';
create index usage_reservations_voice_open on usage_reservations (account_id, voice_session_id) where status = 'open' and kind = 'voice';

-- The usage record: exactly one per reservation (unique reservation_id), written when the reservation closes.
-- outcome: settled (spend recorded), released (no provider spend), expired (abandoned; released by the sweeper).
create table usage_events (
  id              text        primary key,                   -- uev_...
  reservation_id  text        not null unique references usage_reservations (id) on delete cascade,
  account_id      text        not null references hosting_accounts (account_id) on delete cascade,
  period_start    timestamptz not null,
  kind            text        not null,
  source          text        not null,
  assistant_id    text,
  mode            text        not null check (mode in ('shadow', 'enforce')),
  outcome         text        not null check (outcome in ('settled', 'released', 'expired')),
  model           text,
  input_tokens    integer     not null default 0,
  output_tokens   integer     not null default 0,
  units           integer     not null default 0,            -- ingestion chunks, voice seconds
  cost_micros     bigint      not null default 0 check (cost_micros >= 0),
  reserved_micros bigint      not null default 0,
  created_at      timestamptz not null
);
create index usage_events_account_recent on usage_events (account_id, created_at desc, id desc);
create index usage_events_account_period on usage_events (account_id, period_start, assistant_id);

-- Billing provider subscriptions, one row per subscription, holding its newest known state. The account's plan
-- is derived from all its rows, so webhooks delivered in any order, any number of times, give one result.
create table billing_subscriptions (
  id                    text        primary key,             -- the provider's subscription id
  account_id            text        not null references hosting_accounts (account_id) on delete cascade,
  customer_id           text,
  product_id            text,
  status                text        not null,
  revoked               boolean     not null default false,
  current_period_start  timestamptz,
  current_period_end    timestamptz,
  -- Ordering key of the state held: the provider's modified_at, then the event kind's rank.
  source_modified_at    timestamptz not null,
  source_rank           integer     not null,
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now()
);
create index billing_subscriptions_account on billing_subscriptions (account_id);
create trigger billing_subscriptions_touch before update on billing_subscriptions for each row execute function touch_updated_at();
