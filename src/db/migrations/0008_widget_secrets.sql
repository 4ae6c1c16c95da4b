-- 0008 widget secrets: identity verification for signed widget visitors. An owner's backend signs its own users'
-- visitor ids with the assistant's widget secret. The secret itself is never stored: it is derived from SECRET_KEY,
-- the assistant and this generation, so a rotation (generation + 1) invalidates every earlier secret at once.
-- Forward-only: never edit after release; add 00NN instead.
create table widget_secrets (
  assistant_id text        primary key references assistants (id) on delete cascade,
  generation   integer     not null,
  rotated_at   timestamptz not null default now()
);
