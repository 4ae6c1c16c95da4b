import { v1 } from '../api/client.js';
import { CallTimelinePicture } from '../ui/call-timeline.js';
import { Loaded, useLoad, usePoll } from '../ui/components.js';

/**
 * A voice scenario result's call, inline: its timeline (lanes, turns, latency summary) and its recording when the
 * assistant records (re-read until the file is written).
 */
export function ScenarioCalls({ conversationId, name }: { conversationId: string; name: string }) {
  const load = useLoad(
    () => v1.GET('/api/v1/conversations/{conversationId}', { params: { path: { conversationId } } }),
    [conversationId],
  );
  const writing = load.state === 'ready' && load.data.recordings.some((r) => !r.ready);
  usePoll(writing, 1500, () => void load.reload());
  return (
    <Loaded load={load} label="Loading the call…">
      {({ recordings, voiceCalls }) => (
        <div class="recordings">
          {voiceCalls.map((call, i) => {
            const recording = recordings.find((r) => r.sessionId === call.sessionId);
            const label = voiceCalls.length > 1 ? `${name}, call ${i + 1}` : name;
            return (
              <div class="recording" role="group" aria-label={`Call of ${label}`}>
                <CallTimelinePicture sessionId={call.sessionId} label={label} />
                {recording &&
                  (recording.ready ? (
                    <audio controls preload="metadata" src={recording.url} aria-label={`Recording of ${label}`} />
                  ) : (
                    <p class="muted">The recording is still being written.</p>
                  ))}
              </div>
            );
          })}
        </div>
      )}
    </Loaded>
  );
}
