-- 0038 recording retention: an assistant may keep its call recordings for a number of days
-- (settings.voice.recordingRetentionDays); the recordings sweep deletes older ones from disk or the bucket and marks
-- the call here, so the sweep never asks for it again and no route lists or plays it. Forward-only: never edit after
-- release; add a new migration instead.

alter table voice_sessions add column recording_expired_at timestamptz;

-- The retention sweep: recorded calls not yet expired, oldest first.
create index voice_sessions_recorded_unexpired on voice_sessions (ended_at)
  where recording_enabled and recording_consent and recording_expired_at is null and ended_at is not null;
