import { useEffect, useRef, useState } from 'preact/hooks';
import { streamChat, v1, type Assistant, type ChatSource } from '../api/client.js';
import { dashboardApi } from '../api/dashboard-routes.js';
import { ErrorBox, SourceList } from '../ui/components.js';
import { href } from '../router.js';

interface Turn {
  role: 'user' | 'assistant';
  text: string;
  sources: ChatSource[];
  outcome?: string;
  error?: { code: string; message: string };
  streaming?: boolean;
}

/**
 * Talk to the assistant as its owner (chat source "playground", metered to the account like any chat): answers
 * stream in over SSE with the passages they used.
 */
export function PlaygroundTab({ assistant }: { assistant: Assistant }) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const conversationId = useRef<string | undefined>(undefined);
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);

  const update = (fn: (t: Turn) => Turn) => setTurns((all) => [...all.slice(0, -1), fn(all[all.length - 1]!)]);

  const send = async (event: Event) => {
    event.preventDefault();
    const text = message.trim();
    if (text === '' || busy) return;
    setBusy(true);
    setError(undefined);
    setMessage('');
    setTurns((all) => [
      ...all,
      { role: 'user', text, sources: [] },
      { role: 'assistant', text: '', sources: [], streaming: true },
    ]);
    const ctl = new AbortController();
    abort.current = ctl;
    try {
      for await (const e of streamChat(
        v1,
        {
          assistantId: assistant.id,
          message: text,
          source: 'playground',
          ...(conversationId.current ? { conversationId: conversationId.current } : {}),
        },
        { signal: ctl.signal },
      )) {
        if (e.type === 'token') update((t) => ({ ...t, text: t.text + e.text }));
        else if (e.type === 'meta') {
          conversationId.current = e.conversationId;
          update((t) => ({ ...t, sources: e.sources, outcome: e.outcome }));
        } else if (e.type === 'error') update((t) => ({ ...t, error: { code: e.code, message: e.message } }));
      }
      update((t) => ({ ...t, streaming: false }));
    } catch (err) {
      setError(err);
      setTurns((all) => all.slice(0, -1));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="stack">
      <section class="card playground" aria-labelledby="pg-h">
        <div class="page-head">
          <h2 id="pg-h">Chat</h2>
          {turns.length > 0 && (
            <button
              type="button"
              onClick={() => {
                conversationId.current = undefined;
                setTurns([]);
              }}
            >
              New conversation
            </button>
          )}
        </div>
        <div class="transcript" aria-live="polite" aria-label="Playground conversation">
          {turns.length === 0 && (
            <p class="muted">{assistant.welcomeMessage ?? 'Ask something your documents answer.'}</p>
          )}
          {turns.map((t) => (
            <div class={`bubble ${t.role}`}>
              <span class="sr-only">{t.role === 'user' ? 'You:' : 'Assistant:'}</span>
              <p class="bubble-text">{t.text || (t.streaming ? '…' : '')}</p>
              {t.error && (
                <p class="doc-error" role="alert">
                  The answer stopped: {t.error.message} ({t.error.code})
                </p>
              )}
              {t.outcome === 'no_answer' && <p class="muted">No answer found in the documents.</p>}
              <SourceList sources={t.sources} open />
            </div>
          ))}
        </div>
        <ErrorBox error={error} title="The message was not answered" />
        <form class="composer" onSubmit={(e) => void send(e)}>
          <label class="grow">
            Message
            <textarea
              rows={2}
              maxLength={4000}
              value={message}
              onInput={(e) => setMessage(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.shiftKey) void send(e);
              }}
            />
          </label>
          <button type="submit" class="primary" disabled={busy || message.trim() === ''}>
            {busy ? 'Answering…' : 'Send'}
          </button>
        </form>
        {conversationId.current && (
          <p class="muted">
            Saved as a playground conversation:{' '}
            <a
              href={href(
                `/assistants/${encodeURIComponent(assistant.publicId)}/conversations/${encodeURIComponent(conversationId.current)}`,
              )}
            >
              open transcript
            </a>
          </p>
        )}
      </section>
      <VoicePlayground assistant={assistant} />
    </div>
  );
}

/** Loads the widget script once per page (same origin: the dashboard's `script-src 'self'` admits it). */
function loadWidgetScript(src: string): Promise<void> {
  if (customElements.get('parley-assistant') !== undefined) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    script.async = true;
    script.onload = () => resolve();
    script.onerror = () => reject(new Error('The voice widget could not be loaded.'));
    document.head.append(script);
  });
}

/**
 * Voice: a call through the <parley-assistant> widget in playground mode (`source="playground"`): it calls the API
 * as the signed-in owner with the session cookie, same origin, so the call is metered as playground seconds (exempt
 * from the voice minutes when the server says so) and never needs the assistant's allowed site domains.
 */
export function VoicePlayground({ assistant }: { assistant: Assistant }) {
  const [widget, setWidget] = useState<'loading' | 'ready' | 'absent' | 'failed'>('loading');
  const [ended, setEnded] = useState<string | null>(null);
  const [voiceNote, setVoiceNote] = useState<string | null>(null);
  /** A server whose voice takes no WebRTC (the local voice): the widget goes straight to the relay. */
  const [relayOnly, setRelayOnly] = useState(false);
  const host = useRef<HTMLDivElement | null>(null);
  useEffect(() => {
    let cancelled = false;
    // The server says here when its voice is only simulated (the offline engines are not installed).
    fetch('/readyz')
      .then((r) => r.json() as Promise<{ notes?: { voice?: string } }>)
      .then(
        (r) => !cancelled && setVoiceNote(r.notes?.voice ?? null),
        () => undefined,
      );
    dashboardApi
      .config()
      .then((c) => {
        if (c.widgetScript === null) return 'absent' as const;
        setRelayOnly(!c.voiceTransports.includes('webrtc'));
        return loadWidgetScript(c.widgetScript).then(() => 'ready' as const);
      })
      .then(
        (state) => !cancelled && setWidget(state),
        () => !cancelled && setWidget('failed'),
      );
    return () => {
      cancelled = true;
    };
  }, []);
  useEffect(() => {
    const box = host.current;
    if (box === null || widget !== 'ready') return;
    // Made here, not in JSX: Preact would set `open`/`mode` as properties (the element's methods and getters).
    const el = document.createElement('parley-assistant');
    for (const [name, value] of [
      ['assistant-id', assistant.publicId],
      ['source', 'playground'],
      ['mode', 'voice'],
      ['position', 'inline'],
      ...(relayOnly ? [['transport', 'websocket']] : []),
    ])
      el.setAttribute(name!, value!);
    box.replaceChildren(el);
    const onState = (e: Event) => {
      if ((e as CustomEvent<{ voice: string }>).detail.voice === 'connecting') setEnded(null);
    };
    const onEnded = () => setEnded('The call ended. Its seconds count as playground voice on the Usage page.');
    el.addEventListener('parley:state', onState);
    el.addEventListener('parley:ended', onEnded);
    return () => {
      el.removeEventListener('parley:state', onState);
      el.removeEventListener('parley:ended', onEnded);
      el.remove(); // a running call is ended by the widget when it leaves the page
    };
  }, [widget, assistant.publicId, relayOnly]);
  const settings = href(`/assistants/${encodeURIComponent(assistant.publicId)}`);
  return (
    <section class="card" aria-labelledby="voice-h">
      <h2 id="voice-h">Voice</h2>
      {!assistant.settings.voice.enabled ? (
        <p class="muted">
          Voice is off for this assistant. Turn it on in <a href={settings}>Settings</a>.
        </p>
      ) : widget === 'loading' ? (
        <p class="muted">Loading the voice widget…</p>
      ) : widget === 'absent' ? (
        <p class="muted">This server does not serve the voice widget.</p>
      ) : widget === 'failed' ? (
        <p role="alert">The voice widget could not be loaded. Reload the page to try again.</p>
      ) : (
        <>
          <p class="muted">
            Talk to the assistant through the same widget your visitors use. Playground calls are metered as playground
            seconds.
          </p>
          {voiceNote && (
            <p role="note" class="notice">
              Note: {voiceNote}.
            </p>
          )}
          <div ref={host} class="voice-widget" />
          {ended && <p class="muted">{ended}</p>}
        </>
      )}
    </section>
  );
}
