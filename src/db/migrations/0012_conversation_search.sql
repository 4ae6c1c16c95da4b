-- 0012 conversations an owner can use: the list filters by account (not only by assistant), and shows what each voice
-- call cost, read from the usage ledger by voice session. Forward-only: never edit after release; add 00NN instead.
-- No extensions (PGlite runs this too).

-- The account-wide conversation list, newest first (filters by channel, date, outcome and text narrow it further).
create index conversations_account_page on conversations (account_id, created_at desc, id desc);

-- A visitor's conversations (the privacy request "delete everything about this visitor").
create index conversations_account_visitor on conversations (account_id, visitor_id) where visitor_id is not null;

-- The grants of one voice session (the call's cost is the sum of their settled events) are found by
-- usage_reservations_voice_session, which 0011 creates.

-- Voice sessions of one visitor (erased with their conversations).
create index voice_sessions_visitor on voice_sessions (account_id, visitor_id) where visitor_id is not null;
