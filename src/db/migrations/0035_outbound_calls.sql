-- 0035 outbound calls: calls Parley places through a number's carrier. Forward-only: never edit after release; add
-- 00NN instead. No extensions (PGlite runs this too).

-- One call Parley asked a carrier to place. The carrier's status callbacks move `status` forward; once the callee
-- answers, the call is a voice session (and a conversation) like an inbound one. `public_base` is the address the
-- carrier was given (and signs its callbacks over), kept so that a callback is checked against exactly that URL.
create table outbound_calls (
  id                    text        primary key,          -- call_...
  account_id            text        not null references accounts (id) on delete cascade,
  assistant_id          text        not null references assistants (id) on delete cascade,
  phone_number_id       text        references phone_numbers (id) on delete set null,
  to_number             text        not null,             -- E.164
  from_number           text        not null,             -- E.164, a registered number of the account
  status                text        not null check (status in
                          ('queued', 'ringing', 'in_progress', 'completed', 'busy', 'no_answer', 'failed', 'canceled')),
  carrier_call_id       text,                             -- Twilio's CallSid once the carrier took the call
  answered_by           text,                             -- human | machine | unknown (the carrier's detection)
  outcome               text,                             -- answered | voicemail | busy | no_answer | failed | canceled
  voicemail             jsonb,                            -- null | {"action":"hangup"} | {"action":"message","message":...}
  variables             jsonb       not null default '{}',
  metadata              jsonb       not null default '{}',
  max_duration_seconds  integer,
  public_base           text        not null,
  voice_session_id      text,
  conversation_id       text,
  failure               text,                             -- why the carrier refused, owner-facing
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now(),
  answered_at           timestamptz,
  ended_at              timestamptz
);
create index outbound_calls_account on outbound_calls (account_id, created_at desc, id desc);
create unique index outbound_calls_carrier on outbound_calls (carrier_call_id) where carrier_call_id is not null;
-- Calls not yet over count against the plan's concurrent calls before the carrier is asked for another.
create index outbound_calls_open on outbound_calls (account_id) where status in ('queued', 'ringing', 'in_progress');
