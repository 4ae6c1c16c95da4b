-- 0037 call transfers: a live call Parley placed handed to a person's number (cold: the carrier dials them and the
-- assistant leaves). Forward-only: never edit after release; add 00NN instead.
alter table outbound_calls add column transferred_to text;
alter table outbound_calls add column transferred_at timestamptz;
