-- 0013 voice timeline: what happened in each call and when (events since the mint, turns with their latency split
-- into owned parts). Forward-only: never edit after release; add 00NN instead. Written by the owning instance every
-- few seconds while the call runs and once after it settled; bounded per call (a long call keeps its first and last
-- events and counts the middle). No transcripts or audio here: event details are codes, counts and reasons.

create table voice_timelines (
  session_id     text        primary key references voice_sessions (id) on delete cascade,
  account_id     text        not null references accounts (id) on delete cascade,
  assistant_id   text        not null references assistants (id) on delete cascade,
  transport      text        not null,
  minted_at      timestamptz not null,
  events         jsonb       not null,
  events_omitted jsonb,
  turns          jsonb       not null,
  turns_omitted  integer     not null default 0,
  -- The call had settled when this was written: nothing will change it any more.
  final          boolean     not null default false,
  updated_at     timestamptz not null default now()
);
-- The assistant page's latency over the last days.
create index voice_timelines_assistant on voice_timelines (assistant_id, minted_at desc);
