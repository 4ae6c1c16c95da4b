-- 0002 identity: users, accounts, hosting accounts, dashboard sessions, API keys, the audit log.
-- Forward-only: never edit after release; add 00NN instead. No extensions (PGlite runs this too).

create table users (
  id            text        primary key,                 -- usr_...
  email         text        not null,
  name          text,
  -- scrypt$N$r$p$<salt b64>$<hash b64> (node:crypto); never the password.
  password_hash text        not null,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
-- Case-insensitive uniqueness without citext.
create unique index users_email_lower on users (lower(email));
create trigger users_touch before update on users for each row execute function touch_updated_at();

-- One account per user (the owner); every resource (assistants, keys, usage) belongs to an account.
create table accounts (
  id            text        primary key,                 -- acct_...
  owner_user_id text        not null unique references users (id) on delete restrict,
  name          text,
  status        text        not null default 'active' check (status in ('active', 'suspended', 'disabled')),
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create trigger accounts_touch before update on accounts for each row execute function touch_updated_at();

-- One per account, keyed by the account id (the id everywhere an account is named). Plan, billing period and
-- limit override; the metering migration (0004) extends this table and ties plan_code to plan_entitlements.
create table hosting_accounts (
  account_id            text        primary key references accounts (id) on delete cascade,
  plan_code             text        not null default 'free',
  status                text        not null default 'active' check (status in ('active', 'suspended', 'disabled')),
  period_start          timestamptz not null default (date_trunc('month', now() at time zone 'utc') at time zone 'utc'),
  period_end            timestamptz not null default ((date_trunc('month', now() at time zone 'utc') + interval '1 month') at time zone 'utc'),
  limit_override_micros bigint      check (limit_override_micros is null or limit_override_micros >= 0),
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now()
);
create trigger hosting_accounts_touch before update on hosting_accounts for each row execute function touch_updated_at();

-- Dashboard sessions, server-side so they can be revoked. Only a SHA-256 of the cookie token is stored.
create table sessions (
  id           text        primary key,                  -- ses_...
  user_id      text        not null references users (id) on delete cascade,
  token_sha256 text        not null unique,
  created_at   timestamptz not null default now(),
  expires_at   timestamptz not null,
  revoked_at   timestamptz,
  ip           text,
  user_agent   text
);
create index sessions_user on sessions (user_id);

-- API keys: the secret is shown once and stored only as its SHA-256 (hex).
create table api_keys (
  id                 text        primary key,            -- key_...
  account_id         text        not null references accounts (id) on delete cascade,
  created_by_user_id text        references users (id) on delete set null,
  name               text        not null,
  -- The first characters of the secret, for display ("sk_live_Ab12Cd..."); not enough to use it.
  prefix             text        not null,
  secret_sha256      text        not null unique,
  scopes             text[]      not null,
  created_at         timestamptz not null default now(),
  last_used_at       timestamptz,
  revoked_at         timestamptz
);
create index api_keys_account on api_keys (account_id) where revoked_at is null;

-- Every operator change (admin routes, operator CLI) leaves one row. Never holds secrets.
create table audit_log (
  id            text        primary key,                 -- aud_...
  actor_user_id text,                                    -- null: the operator CLI or the system
  action        text        not null,                    -- e.g. account.status_changed, key.created
  target_type   text        not null,                    -- e.g. account, api_key, user
  target_id     text        not null,
  before        jsonb,
  after         jsonb,
  request_id    text,
  created_at    timestamptz not null default now()
);
create index audit_log_target on audit_log (target_type, target_id, created_at desc);
create index audit_log_created on audit_log (created_at desc);
