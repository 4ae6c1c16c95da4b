-- 0014 phone numbers: callers reach an assistant through a carrier (Twilio Media Streams). Forward-only: never edit
-- after release; add 00NN instead. No extensions (PGlite runs this too).

-- A carrier number routed to one assistant. The carrier account's auth token signs every webhook and stream the
-- carrier sends; Parley must use it again, so it is stored sealed (AES-256-GCM under a key derived from the
-- deployment's SECRET_KEY, bound to the row id), never returned after creation.
create table phone_numbers (
  id                 text        primary key,             -- pn_...
  account_id         text        not null references accounts (id) on delete cascade,
  assistant_id       text        not null references assistants (id) on delete cascade,
  phone_number       text        not null,                -- E.164
  provider           text        not null check (provider in ('twilio')),
  carrier_account    text        not null,                -- the carrier's AccountSid
  auth_token_sealed  text        not null,
  created_at         timestamptz not null default now()
);
-- A number reaches one assistant, whoever registered it: the same number twice is refused.
create unique index phone_numbers_number on phone_numbers (provider, phone_number);
create index phone_numbers_account on phone_numbers (account_id, created_at desc, id desc);
-- The webhook finds the tokens of the carrier account that signed the request.
create index phone_numbers_carrier_account on phone_numbers (provider, carrier_account);

-- The caller's number (E.164, as the carrier gave it) of a phone call; shown masked. Null for every other source.
alter table conversations add column caller_number text;
alter table voice_sessions add column caller_number text;
