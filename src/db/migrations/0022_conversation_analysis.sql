-- 0022 conversation analysis: what is read from a conversation once it ends (summary, structured data, success,
-- sentiment), kept per conversation and produced by a durable queue any instance works. Forward-only: never edit after
-- release; add a new migration instead. The number leaves room for migrations written at the same time elsewhere (the
-- runner needs increasing, not contiguous, numbers).

-- One row per conversation: its latest analysis and the queue entry that produces it. `trigger` names what ended the
-- conversation ('voice:<session id>' once a call settles, 'chat:<message count>' once a chat is idle, 'rerun:<id>' when
-- the owner asks); together with `settings_version` (a digest of the assistant's analysis settings) it is what makes an
-- automatic analysis run once: an enqueue that names the same trigger and version changes nothing. Claimed with
-- FOR UPDATE SKIP LOCKED under a lease (lease_token fences a stale worker's write; an expired lease is claimed again,
-- so an instance that died mid-analysis loses nothing, and the result and its webhook commit together, once).
create table conversation_analyses (
  conversation_id   text        primary key references conversations (id) on delete cascade,
  account_id        text        not null references accounts (id) on delete cascade,
  assistant_id      text        not null references assistants (id) on delete cascade,
  settings_version  text        not null,
  trigger           text        not null,
  status            text        not null default 'pending' check (status in ('pending', 'done')),
  attempts          integer     not null default 0,
  lease_token       text,
  locked_until      timestamptz,
  -- The analysis as the API answers it (engine, each step's value or null with its reason).
  result            jsonb,
  requested_at      timestamptz not null default now(),
  completed_at      timestamptz,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now()
);
create index conversation_analyses_due on conversation_analyses (requested_at) where status = 'pending';
create trigger conversation_analyses_touch before update on conversation_analyses for each row execute function touch_updated_at();

-- The sweeps that feed the queue: calls settled lately, chats gone quiet.
create index voice_sessions_ended on voice_sessions (ended_at) where ended_at is not null;
create index conversations_last_touched on conversations (updated_at);
