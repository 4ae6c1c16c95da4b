-- 0003 knowledge: assistants, documents and their chunks, the ingestion job queue, conversations, messages,
-- feedback. Forward-only: never edit after release; add 00NN instead. No extensions (PGlite runs this too).

-- An assistant has two ids: `id` (internal, a UUID as text) and `public_id` (asst_..., a public capability
-- used by keyless widget callers). `settings` holds the security policy and voice settings (docs/design-decisions.md).
create table assistants (
  id              text        primary key,
  public_id       text        not null unique,
  account_id      text        not null references accounts (id) on delete cascade,
  name            text        not null,
  description     text,
  welcome_message text,
  instructions    text,
  -- Text search configuration used for this assistant's chunks and queries (a regconfig name such as
  -- 'english' or 'simple'); a copy of settings.language kept as a column so SQL can use it directly.
  language        text        not null default 'english',
  settings        jsonb       not null default '{}'::jsonb,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now()
);
create index assistants_account_page on assistants (account_id, created_at desc, id desc);
create trigger assistants_touch before update on assistants for each row execute function touch_updated_at();

-- A document is one source of knowledge. `source` keeps what is needed to ingest it again (the uploaded
-- bytes, the text, the FAQ pairs as JSON); URL documents are fetched again on every (re)processing.
create table documents (
  id           text        primary key,                -- doc_...
  assistant_id text        not null references assistants (id) on delete cascade,
  account_id   text        not null references accounts (id) on delete cascade,
  type         text        not null check (type in ('file', 'text', 'url', 'faq')),
  name         text        not null,
  mime_type    text,
  source_url   text,
  source       bytea,
  status       text        not null default 'pending' check (status in ('pending', 'processing', 'ready', 'failed')),
  error        text,
  chunk_count  integer     not null default 0,
  created_at   timestamptz not null default now(),
  updated_at   timestamptz not null default now()
);
create index documents_assistant_page on documents (assistant_id, created_at desc, id desc);
create index documents_account_page on documents (account_id, created_at desc, id desc);
create trigger documents_touch before update on documents for each row execute function touch_updated_at();

-- Retrieval units. `heading` is the heading path the text sits under ("Guide > Refunds"), kept with the text
-- so a passage never loses its title. `tsv` is computed on insert with the assistant's language (a generated
-- column cannot be used: the text -> regconfig cast is not immutable); weight A for headings, B for text.
create table document_chunks (
  id           bigint      generated always as identity primary key,
  document_id  text        not null references documents (id) on delete cascade,
  assistant_id text        not null references assistants (id) on delete cascade,
  ordinal      integer     not null,
  heading      text,
  content      text        not null,
  tsv          tsvector    not null
);
-- Ranking reads `tsv` of every candidate row: keep it in the row (MAIN) and push the text out of line
-- (EXTERNAL), so a candidate costs one heap tuple, not a TOAST fetch; the text is read for the top k only.
alter table document_chunks alter column tsv set storage main;
alter table document_chunks alter column content set storage external;
create index document_chunks_tsv on document_chunks using gin (tsv);
create index document_chunks_assistant on document_chunks (assistant_id);
create index document_chunks_document on document_chunks (document_id, ordinal);

-- Document frequency of every lexeme in an assistant's passages, maintained on ingest and delete. Retrieval
-- uses it to choose the rare query terms that select candidates (a term in half the passages says little
-- about relevance and would make every query rank half the corpus).
create table assistant_lexemes (
  assistant_id text    not null references assistants (id) on delete cascade,
  lexeme       text    not null,
  df           integer not null,
  primary key (assistant_id, lexeme)
);

-- The durable ingestion queue: one row per document that needs (re)processing. Workers claim a row with
-- FOR UPDATE SKIP LOCKED and hold a lease (locked_until); a process that dies mid-job leaves a lease that
-- expires, and the job is claimed again. `lease_token` fences a stale worker: only the current holder may
-- finish the job.
create table ingestion_jobs (
  id            bigint      generated always as identity primary key,
  document_id   text        not null unique references documents (id) on delete cascade,
  attempts      integer     not null default 0,
  max_attempts  integer     not null default 5,
  run_at        timestamptz not null default now(),
  locked_until  timestamptz,
  lease_token   text,
  last_error    text,
  created_at    timestamptz not null default now()
);
create index ingestion_jobs_due on ingestion_jobs (run_at);

create table conversations (
  id            text        primary key,               -- conv_...
  assistant_id  text        not null references assistants (id) on delete cascade,
  account_id    text        not null references accounts (id) on delete cascade,
  visitor_id    text,
  source        text        not null check (source in ('api', 'widget', 'playground')),
  message_count integer     not null default 0,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create index conversations_assistant_page on conversations (assistant_id, created_at desc, id desc);
create trigger conversations_touch before update on conversations for each row execute function touch_updated_at();

-- Messages carry what metering needs (provider, model, token counts, cost in micros) from day one.
create table messages (
  id              text        primary key,             -- msg_...
  -- Insertion order: a question and its answer are written in one transaction (same now()).
  seq             bigint      generated always as identity,
  conversation_id text        not null references conversations (id) on delete cascade,
  assistant_id    text        not null references assistants (id) on delete cascade,
  role            text        not null check (role in ('user', 'assistant')),
  content         text        not null,
  -- For assistant messages: the user message it answers (top unanswered questions), and the outcome.
  in_reply_to     text,
  outcome         text        check (outcome in ('answered', 'no_answer', 'model_failure')),
  sources         jsonb       not null default '[]'::jsonb,
  provider        text,
  model           text,
  input_tokens    integer     not null default 0,
  output_tokens   integer     not null default 0,
  cost_micros     bigint      not null default 0,
  created_at      timestamptz not null default now()
);
create index messages_conversation on messages (conversation_id, seq);
create index messages_assistant_created on messages (assistant_id, created_at);

-- One rating per answer; a visitor may change their mind (upsert).
create table message_feedback (
  message_id   text        primary key references messages (id) on delete cascade,
  assistant_id text        not null references assistants (id) on delete cascade,
  rating       text        not null check (rating in ('positive', 'negative')),
  visitor_id   text,
  created_at   timestamptz not null default now(),
  updated_at   timestamptz not null default now()
);
create index message_feedback_assistant on message_feedback (assistant_id, created_at);
create trigger message_feedback_touch before update on message_feedback for each row execute function touch_updated_at();
