-- A call the assistant handed to a person (its built-in transfer_call tool): end reason transferred. The tool finds
-- the outbound call by its voice session.
alter table voice_sessions drop constraint if exists voice_sessions_end_reason_check;
alter table voice_sessions
  add constraint voice_sessions_end_reason_check
  check (end_reason in ('usage_limit', 'superseded', 'idle', 'max_duration', 'heartbeat_lost', 'control_lost',
                        'disconnected', 'voice_unavailable', 'shutdown', 'assistant_ended', 'transferred'));
create index outbound_calls_voice_session on outbound_calls (voice_session_id) where voice_session_id is not null;
