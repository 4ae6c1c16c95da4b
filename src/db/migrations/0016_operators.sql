-- 0016 operators granted in the database: an operator (admin) is a user listed in ADMIN_USER_IDS or one whose
-- admin_granted_at is set. Granting and revoking take effect on the next request without a restart; only the operator
-- CLI (the server's OS user) and an existing operator can change it, each change audited.
-- Forward-only: never edit after release; add 00NN instead. No extensions (PGlite runs this too).
alter table users add column admin_granted_at timestamptz;

-- The operators list reads only the granted rows.
create index users_admin_granted on users (admin_granted_at) where admin_granted_at is not null;
