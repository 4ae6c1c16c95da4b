-- Where a call or a conversation comes from is an open set: a new caller transport (a phone bridge, say) brings a
-- new source without a schema change. The closed lists go; what stays is the shape of a source name (a short
-- lowercase identifier), so a typo in code still fails loudly instead of writing junk.
alter table conversations drop constraint if exists conversations_source_check;
alter table conversations
  add constraint conversations_source_check check (source ~ '^[a-z][a-z0-9_]{0,31}$');

alter table voice_sessions drop constraint if exists voice_sessions_source_check;
alter table voice_sessions
  add constraint voice_sessions_source_check check (source ~ '^[a-z][a-z0-9_]{0,31}$');

alter table usage_reservations drop constraint if exists usage_reservations_source_check;
alter table usage_reservations
  add constraint usage_reservations_source_check check (source ~ '^[a-z][a-z0-9_]{0,31}$');
