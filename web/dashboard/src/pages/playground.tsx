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
    setTurns((all) => [...all, { role: 'user', text, sources: [] }, { role: 'assistant', text: '', sources: [], streaming: true }]);
    const ctl = new AbortController();
    abort.current = ctl;
    try {
      for await (const e of streamChat(
        v1,
        { assistantId: assistant.id, message: text, source: 'playground', ...(conversationId.current ? { conversationId: conversationId.current } : {}) },
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
          {turns.length === 0 && <p class="muted">{assistant.welcomeMessage ?? 'Ask something your documents answer.'}</p>}
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
            <a href={href(`/assistants/${encodeURIComponent(assistant.id)}/conversations/${encodeURIComponent(conversationId.current)}`)}>open transcript</a>
          </p>
        )}
      </section>
      <VoicePlayground assistant={assistant} />
    </div>
  );
}

/**
 * Voice: calls go through the <parley-assistant> widget. It cannot run inside the dashboard yet: its keyless routes
 * admit only the assistant's allowed site origins (and same-origin GETs carry no Origin), and the voice mint has no
 * owner-playground source for a signed-in caller. Until the server admits the owner here, say so and point to the
 * embed snippet rather than show a widget that fails.
 */
function VoicePlayground({ assistant }: { assistant: Assistant }) {
  const [widgetScript, setWidgetScript] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    let cancelled = false;
    dashboardApi.config().then(
      (c) => !cancelled && setWidgetScript(c.widgetScript),
      () => !cancelled && setWidgetScript(null),
    );
    return () => {
      cancelled = true;
    };
  }, []);
  const settings = href(`/assistants/${encodeURIComponent(assistant.id)}`);
  return (
    <section class="card" aria-labelledby="voice-h">
      <h2 id="voice-h">Voice</h2>
      {!assistant.settings.voice.enabled ? (
        <p class="muted">
          Voice is off for this assistant. Turn it on in <a href={settings}>Settings</a>.
        </p>
      ) : widgetScript === undefined ? (
        <p class="muted">Checking the voice widget…</p>
      ) : widgetScript === null ? (
        <p class="muted">This server does not serve the voice widget.</p>
      ) : (
        <p>
          Voice calls go through the <code>&lt;parley-assistant&gt;</code> widget, which cannot place calls from the dashboard yet. To talk
          to this assistant, paste the embed snippet from <a href={settings}>Settings</a> into a page on one of its allowed domains.
        </p>
      )}
    </section>
  );
}

