-- 0017 assistant tools: server tools an assistant may call (the owner's HTTPS endpoints), the assistant's tool signing
-- secret, and every call made, as items of the conversation it was made in. Forward-only: never edit after release; add
-- 00NN instead. No extensions (PGlite runs this too).

-- One tool of an assistant. `parameters` is the JSON Schema (the supported subset, docs/tools.md) its arguments are
-- checked against before any request; `messages` and `examples` are as the owner gave them.
create table assistant_tools (
  id            text        primary key,                        -- tool_...
  assistant_id  text        not null references assistants (id) on delete cascade,
  name          text        not null,
  description   text        not null,
  parameters    jsonb       not null,
  url           text        not null,
  timeout_ms    integer     not null check (timeout_ms between 1000 and 60000),
  mode          text        not null check (mode in ('sync', 'async')),
  messages      jsonb       not null default '{}'::jsonb,
  examples      jsonb       not null default '[]'::jsonb,
  created_at    timestamptz not null default clock_timestamp(),
  updated_at    timestamptz not null default now(),
  unique (assistant_id, name)
);
create index assistant_tools_assistant on assistant_tools (assistant_id, created_at, id);
create trigger assistant_tools_touch before update on assistant_tools for each row execute function touch_updated_at();

-- The assistant's tool signing secret (Standard Webhooks, whsec_), sealed with a key derived from SECRET_KEY. Made with
-- the assistant's first tool; after a rotation the previous one keeps signing beside it until previous_secret_expires_at.
create table assistant_tool_secrets (
  assistant_id                text        primary key references assistants (id) on delete cascade,
  secret_sealed               text        not null,
  previous_secret_sealed      text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz not null default now(),
  updated_at                  timestamptz not null default now()
);
create trigger assistant_tool_secrets_touch before update on assistant_tool_secrets
  for each row execute function touch_updated_at();

-- One tool call of a conversation (role `tool` in the conversation API): the arguments the model gave, what the owner's
-- server answered (or why not), and how long it took. The id is the request's webhook-id. `tool_id` is kept without a
-- foreign key: the call stays in the conversation after its tool is deleted.
create table tool_calls (
  id               text        primary key,                     -- tcall_...
  conversation_id  text        not null references conversations (id) on delete cascade,
  assistant_id     text        not null references assistants (id) on delete cascade,
  in_reply_to      text,                                         -- the user message of the turn
  tool_id          text,
  name             text        not null,
  arguments        jsonb       not null,
  status           text        not null check (status in ('pending', 'succeeded', 'failed')),
  result           jsonb,
  error            text,
  duration_ms      integer     not null,
  created_at       timestamptz not null default clock_timestamp()
);
create index tool_calls_conversation on tool_calls (conversation_id, created_at, id);
