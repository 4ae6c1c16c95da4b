import { useEffect, useRef, useState } from 'preact/hooks';
import { v1, type Assistant } from '../api/client.js';
import { VoicePlayground } from './playground.js';

interface Line {
  role: 'user' | 'assistant';
  text: string;
  final: boolean;
}

interface Latency {
  last: number;
  p50: number;
  turns: number;
}

const POLL_MS = 1500;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

/**
 * "Talk to it" at the top of the assistant page: the playground's voice call (the widget, as the signed-in owner),
 * with the transcript as it is spoken and each turn's latency (end of the caller's speech to the first answer audio,
 * read from the live call's timeline) as it happens.
 */
export function TalkToIt({ assistant }: { assistant: Assistant }) {
  const [open, setOpen] = useState(false);
  return (
    <div class="talk">
      <button type="button" class="primary" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Close the call panel' : 'Talk to it'}
      </button>
      {open && <TalkPanel assistant={assistant} />}
    </div>
  );
}

function TalkPanel({ assistant }: { assistant: Assistant }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [inCall, setInCall] = useState(false);
  const [latency, setLatency] = useState<Latency | null>(null);
  const box = useRef<HTMLDivElement | null>(null);

  // The widget's events bubble out of its shadow root (composed): captions as they grow, and the call's state.
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const onMessage = (e: Event) => {
      const { role, text, final } = (e as CustomEvent<Line>).detail;
      setLines((all) => {
        const last = all.at(-1);
        const growing = last !== undefined && !last.final && last.role === role;
        return [...(growing ? all.slice(0, -1) : all), { role, text, final }].slice(-50);
      });
    };
    const onState = (e: Event) => {
      const voice = (e as CustomEvent<{ voice: string }>).detail.voice;
      if (voice === 'connecting') {
        setLines([]);
        setLatency(null);
      }
      setInCall(voice !== 'idle' && voice !== 'ended' && voice !== 'error');
    };
    el.addEventListener('parley:message', onMessage);
    el.addEventListener('parley:state', onState);
    return () => {
      el.removeEventListener('parley:message', onMessage);
      el.removeEventListener('parley:state', onState);
    };
  }, []);

  // While a call runs: its session from the call log (this assistant's newest playground call), then its timeline.
  useEffect(() => {
    if (!inCall) return;
    let stopped = false;
    let sessionId: string | undefined;
    const tick = async () => {
      if (sessionId === undefined) {
        const page = await v1.GET('/api/v1/call-log', {
          params: { query: { assistantId: assistant.publicId, source: 'playground', limit: 1 } },
        });
        const call = page.calls[0];
        if (call?.state === 'active') sessionId = call.sessionId;
      }
      if (sessionId === undefined) return;
      const timeline = await v1.GET('/api/v1/voice/sessions/{sessionId}/timeline', {
        params: { path: { sessionId } },
      });
      const ms = timeline.turns.map((t) => Math.round(t.latencyMs));
      if (!stopped && ms.length > 0) setLatency({ last: ms.at(-1)!, p50: median(ms), turns: ms.length });
    };
    const timer = setInterval(() => void tick().catch(() => undefined), POLL_MS);
    void tick().catch(() => undefined);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [inCall, assistant.publicId]);

  return (
    <div ref={box} class="talk-panel">
      <VoicePlayground assistant={assistant} />
      <section class="card" aria-labelledby="talk-live-h">
        <h2 id="talk-live-h">Live</h2>
        <p role="status" aria-label="Turn latency">
          {latency === null
            ? 'Turn latency: shown after the first answer.'
            : `Turn latency: last ${latency.last} ms · median ${latency.p50} ms over ${latency.turns} turn${latency.turns === 1 ? '' : 's'}`}
        </p>
        <ol class="talk-transcript" aria-label="Live transcript">
          {lines.map((l) => (
            <li class={`msg ${l.role}`}>
              <strong>{l.role === 'user' ? 'You' : 'Assistant'}:</strong> {l.text}
            </li>
          ))}
        </ol>
      </section>
    </div>
  );
}
