-- 0006 evals: an owner's batch of test questions run against an assistant like chat turns, scored against the
-- expected answers. Forward-only: never edit after release; add 00NN instead. No extensions (PGlite runs this too).

-- One row per eval, and the eval is its own job: the runner (src/evals/runner.ts) claims a queued eval, or a running
-- one whose lease expired (its runner died), with FOR UPDATE SKIP LOCKED; lease_token fences a stale runner's writes.
-- attempts counts claims, so an eval that keeps killing its runner still ends (failed, EVAL_INTERRUPTED).
create table evals (
  id            text        primary key,                 -- eval_...
  assistant_id  text        not null references assistants (id) on delete cascade,
  account_id    text        not null references accounts (id) on delete cascade,
  status        text        not null default 'queued' check (status in ('queued', 'running', 'done', 'failed')),
  case_count    integer     not null check (case_count > 0),
  -- Why a failed eval stopped (an EVAL_* code and an owner-facing sentence).
  error_code    text,
  error         text,
  attempts      integer     not null default 0,
  max_attempts  integer     not null default 3,
  locked_until  timestamptz,
  lease_token   text,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  started_at    timestamptz,
  finished_at   timestamptz
);
create index evals_assistant_recent on evals (assistant_id, created_at desc, id desc);
create index evals_pending on evals (created_at, id) where status in ('queued', 'running');
create trigger evals_touch before update on evals for each row execute function touch_updated_at();

-- One row per question. A case is finished when completed_at is set; a resumed run skips finished cases.
-- reservation_id is the case's single usage reservation (kind eval), written before the provider call, so a run
-- resumed after a crash settles the same reservation instead of opening a second one (one usage event per case).
create table eval_cases (
  eval_id         text        not null references evals (id) on delete cascade,
  ordinal         integer     not null check (ordinal >= 0),
  question        text        not null,
  expected        text,
  answer          text,
  -- [{documentId, name, snippet, score}] like chat's stored sources.
  sources         jsonb       not null default '[]'::jsonb,
  outcome         text        check (outcome in ('answered', 'no_answer', 'model_failure')),
  -- Token-overlap F1 of answer against expected, 0..1; null without an expected answer or without an answer.
  score           double precision check (score is null or (score >= 0 and score <= 1)),
  provider        text,
  model           text,
  input_tokens    integer     not null default 0,
  output_tokens   integer     not null default 0,
  cost_micros     bigint      not null default 0 check (cost_micros >= 0),
  reservation_id  text,
  error           text,
  completed_at    timestamptz,
  primary key (eval_id, ordinal)
);
