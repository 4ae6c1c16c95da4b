-- 0010 webhooks: signed event webhooks to the owner's own endpoints (Standard Webhooks 1.0). Forward-only: never edit
-- after release; add 00NN instead. No extensions (PGlite runs this too; gen_random_uuid() is core PostgreSQL).

-- An owner's receiving endpoint. The signing secret is stored encrypted with a key derived from the deployment's
-- SECRET_KEY (AES-256-GCM, src/webhooks/secret-box.ts), so deliveries can sign with it; it is shown once, at creation.
-- After a rotation the previous secret keeps signing beside the new one until previous_secret_expires_at.
create table webhook_endpoints (
  id                          text        primary key,          -- whep_...
  account_id                  text        not null references accounts (id) on delete cascade,
  url                         text        not null,
  events                      text[]      not null,
  description                 text,
  enabled                     boolean     not null default true,
  -- Why it was turned off by Parley (gone: the endpoint answered 410); null when the owner turned it off.
  disabled_reason             text,
  secret_sealed               text        not null,
  previous_secret_sealed      text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz not null default now(),
  updated_at                  timestamptz not null default now()
);
create index webhook_endpoints_account on webhook_endpoints (account_id, created_at desc, id desc);
create trigger webhook_endpoints_touch before update on webhook_endpoints for each row execute function touch_updated_at();

-- The outbox: one row per event, written in the same transaction as the fact it reports where there is one. `body`
-- is the exact JSON that is signed and sent, so every attempt (and a replay) sends the same bytes under the same
-- webhook-id (the message id).
create table webhook_messages (
  id          text        primary key,                        -- msg_...
  account_id  text        not null references accounts (id) on delete cascade,
  event_type  text        not null,
  body        text        not null,
  created_at  timestamptz not null default now()
);
-- Retention: messages older than 30 days with nothing pending are deleted (with their deliveries) by the worker.
create index webhook_messages_created on webhook_messages (created_at);

-- One row per message and endpoint: pending -> delivered | failed (the schedule ran out) | disabled (the endpoint
-- answered 410 Gone). Claimed with FOR UPDATE SKIP LOCKED under a lease (lease_token fences a stale worker's
-- write; an expired lease is claimed again, so a worker that died mid-request loses nothing). A replay is a new row.
create table webhook_deliveries (
  id                text        primary key,                  -- whd_...
  message_id        text        not null references webhook_messages (id) on delete cascade,
  endpoint_id       text        not null references webhook_endpoints (id) on delete cascade,
  status            text        not null default 'pending' check (status in ('pending', 'delivered', 'failed', 'disabled')),
  attempts          integer     not null default 0,
  next_attempt_at   timestamptz,
  last_status_code  integer,
  last_error        text,
  lease_token       text,
  locked_until      timestamptz,
  created_at        timestamptz not null default clock_timestamp(),
  updated_at        timestamptz not null default now(),
  delivered_at      timestamptz
);
create index webhook_deliveries_endpoint_recent on webhook_deliveries (endpoint_id, created_at desc, id desc);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_message on webhook_deliveries (message_id);
create trigger webhook_deliveries_touch before update on webhook_deliveries for each row execute function touch_updated_at();
