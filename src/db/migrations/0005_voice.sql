-- 0005 voice: one row per realtime voice session. Forward-only: never edit after release; add 00NN instead.
-- No extensions (PGlite runs this too). Transcripts are stored as conversation messages (0003), so owners find
-- voice conversations next to chat ones; this table keeps the call itself.

create table voice_sessions (
  id                   text        primary key,                -- vs_...
  account_id           text        not null references accounts (id) on delete cascade,
  assistant_id         text        not null references assistants (id) on delete cascade,
  conversation_id      text        references conversations (id) on delete set null,
  -- The API key that minted it (null for widget/playground callers).
  api_key_id           text,
  source               text        not null check (source in ('api', 'widget', 'playground')),
  visitor_id           text,
  -- active -> ended (by its owner) | lost (settled by another instance after the owner died) ; failed: the provider
  -- never confirmed the data-channel lock, nothing was billed.
  state                text        not null check (state in ('active', 'ended', 'lost', 'failed')),
  end_reason           text        check (end_reason in ('usage_limit', 'superseded', 'idle', 'max_duration', 'heartbeat_lost',
                                                         'control_lost', 'disconnected', 'voice_unavailable', 'shutdown')),
  ended_by             text        check (ended_by in ('client', 'service', 'reaper')),
  -- Declared by the client at mint: heartbeat, playback_gate.
  capabilities         text[]      not null,
  recording_enabled    boolean     not null default false,
  recording_consent    boolean     not null default false,
  provider             text        not null,
  provider_session_id  text,
  -- Error code of a failed mint (e.g. VOICE_PROVIDER_UNCONFIRMED).
  failure_code         text,
  -- Ownership (the store record is the live truth; these let any instance settle an orphan exactly once).
  owner_instance       text        not null,
  owner_generation     integer     not null default 1,
  renewed_at           timestamptz not null default now(),
  max_duration_seconds integer     not null,
  idle_timeout_seconds integer     not null,
  -- Last cumulative provider usage seen (updated with each ownership renewal), and the settled figure.
  usage_seconds        double precision not null default 0,
  billable_seconds     integer     not null default 0,
  usage_finalized      boolean     not null default false,
  created_at           timestamptz not null default now(),
  started_at           timestamptz,
  ended_at             timestamptz,
  updated_at           timestamptz not null default now()
);
create index voice_sessions_assistant_page on voice_sessions (assistant_id, created_at desc, id desc);
create index voice_sessions_conversation on voice_sessions (conversation_id);
-- The orphan sweep: active sessions whose owner stopped renewing.
create index voice_sessions_active_renewed on voice_sessions (renewed_at) where state = 'active';
create trigger voice_sessions_touch before update on voice_sessions for each row execute function touch_updated_at();
