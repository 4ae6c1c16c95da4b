-- A call the assistant ended itself (its built-in end_call tool): end reason assistant_ended.
alter table voice_sessions drop constraint if exists voice_sessions_end_reason_check;
alter table voice_sessions
  add constraint voice_sessions_end_reason_check
  check (end_reason in ('usage_limit', 'superseded', 'idle', 'max_duration', 'heartbeat_lost', 'control_lost',
                        'disconnected', 'voice_unavailable', 'shutdown', 'assistant_ended'));
