-- 0001 foundation: what every capability may lean on. Forward-only: never edit after release; add 00NN instead.
-- Reserved for later capabilities: 0002_identity, 0003_knowledge, 0004_metering, 0005_voice.

-- Keeps updated_at honest without every UPDATE having to remember it.
-- Use: create trigger <table>_touch before update on <table> for each row execute function touch_updated_at();
create function touch_updated_at() returns trigger
language plpgsql as $$
begin
  new.updated_at := now();
  return new;
end;
$$;

-- Durable idempotency: the billing webhook (scope 'billing:polar', key = webhook-id), Idempotency-Key on
-- owner routes (scope 'api:<account id>') and any other at-most-once work. Insert ... on conflict do nothing
-- claims a key; the row that already exists tells a retry what happened the first time.
create table idempotency_keys (
  scope       text        not null,
  key         text        not null,
  -- Hash of the request that first used the key: the same key with a different request is a client error.
  fingerprint text,
  -- The stored outcome; null while the first attempt is still in progress.
  response    jsonb,
  created_at  timestamptz not null default now(),
  -- Rows past this are eligible for pruning; null keeps the row forever (e.g. billing events).
  expires_at  timestamptz,
  primary key (scope, key)
);

create index idempotency_keys_expires_at on idempotency_keys (expires_at) where expires_at is not null;
