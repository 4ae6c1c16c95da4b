-- 0032 scenarios: an owner's scripted test calls of an assistant (what a simulated caller says, presses, waits for and
-- talks over; what the assistant must and must not do), their runs and each scenario's result in a run with its
-- verdicts and evidence. Forward-only: never edit after release; add 00NN instead. No extensions (PGlite runs this too).

create table scenarios (
  id            text        primary key,                        -- scn_...
  assistant_id  text        not null references assistants (id) on delete cascade,
  name          text        not null,
  transport     text        not null check (transport in ('websocket', 'phone', 'chat')),
  -- [{say} | {press} | {wait} | {interrupt, afterMs}], as validated by src/scenarios/schemas.ts.
  turns         jsonb       not null,
  -- [{mustSay} | {neverSay} | {toolCalled} | {endReason} | {maxTurnLatencyMs} | {maxFirstAudioMs} | {stopsWithinMs} | {analysis}]
  expect        jsonb       not null,
  tool_mocks    jsonb       not null default '[]'::jsonb,
  created_at    timestamptz not null default clock_timestamp(),
  updated_at    timestamptz not null default now(),
  unique (assistant_id, name)
);
create index scenarios_assistant on scenarios (assistant_id, created_at, id);
create trigger scenarios_touch before update on scenarios for each row execute function touch_updated_at();

-- One run of some or all of an assistant's scenarios. A run executes on the instance that accepted it; a run that
-- instance could not finish (it stopped) is marked failed with SCENARIO_RUN_INTERRUPTED.
create table scenario_runs (
  id              text        primary key,                      -- srun_...
  assistant_id    text        not null references assistants (id) on delete cascade,
  account_id      text        not null references accounts (id) on delete cascade,
  status          text        not null default 'running' check (status in ('running', 'done', 'failed')),
  concurrency     integer     not null check (concurrency between 1 and 10),
  scenario_count  integer     not null check (scenario_count > 0),
  -- Pass rate and latency figures over the run's results, set when it ends.
  figures         jsonb,
  error_code      text,
  created_at      timestamptz not null default clock_timestamp(),
  finished_at     timestamptz
);
create index scenario_runs_assistant_recent on scenario_runs (assistant_id, created_at desc, id desc);

-- One scenario's result in a run: the scenario as it was run (a later edit does not rewrite history), the
-- conversation it made (source `test`), the transcript with timings, and one verdict per expectation.
create table scenario_results (
  run_id           text        not null references scenario_runs (id) on delete cascade,
  ordinal          integer     not null check (ordinal >= 0),
  scenario_id      text        references scenarios (id) on delete set null,
  scenario         jsonb       not null,
  status           text        not null default 'pending'
                   check (status in ('pending', 'running', 'passed', 'failed', 'error')),
  conversation_id  text,
  transcript       jsonb       not null default '[]'::jsonb,
  verdicts         jsonb       not null default '[]'::jsonb,
  figures          jsonb       not null default '{}'::jsonb,
  error            text,
  started_at       timestamptz,
  finished_at      timestamptz,
  primary key (run_id, ordinal)
);
create index scenario_results_scenario on scenario_results (scenario_id, run_id) where scenario_id is not null;
