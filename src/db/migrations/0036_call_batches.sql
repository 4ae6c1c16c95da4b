-- 0036 call batches: many calls from one number, paced and retried. Forward-only: never edit after release; add 00NN
-- instead. No extensions (PGlite runs this too).

-- A batch of contacts to call. The batch worker of any instance claims contacts (FOR UPDATE SKIP LOCKED) and, in the
-- same transaction, stores each one's call: a contact is called at most once per attempt across restarts.
create table call_batches (
  id                 text        primary key,             -- cb_...
  account_id         text        not null references accounts (id) on delete cascade,
  assistant_id       text        not null references assistants (id) on delete cascade,
  phone_number_id    text        references phone_numbers (id) on delete set null,
  from_number        text        not null,
  status             text        not null check (status in ('running', 'paused', 'canceled', 'completed')),
  max_concurrent     integer     not null,
  reserved_inbound   integer     not null default 0,
  retry              jsonb       not null,                -- {onNoAnswer, onBusy, attempts, afterMinutes}
  call_window        jsonb,                               -- null | {days, start, end, timezone}
  voicemail          jsonb,
  public_base        text        not null,
  total              integer     not null,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now(),
  completed_at       timestamptz
);
create index call_batches_account on call_batches (account_id, created_at desc, id desc);
create index call_batches_running on call_batches (updated_at) where status = 'running';

create table call_batch_contacts (
  batch_id         text        not null references call_batches (id) on delete cascade,
  seq              integer     not null,
  to_number        text        not null,
  variables        jsonb       not null default '{}',
  status           text        not null default 'pending' check (status in ('pending', 'calling', 'done')),
  attempts         integer     not null default 0,
  next_attempt_at  timestamptz not null default now(),
  call_id          text,
  outcome          text,
  primary key (batch_id, seq)
);
create index call_batch_contacts_due on call_batch_contacts (batch_id, next_attempt_at) where status = 'pending';

alter table outbound_calls add column batch_id text references call_batches (id) on delete set null;
alter table outbound_calls add column batch_seq integer;
create index outbound_calls_batch on outbound_calls (batch_id) where batch_id is not null;
