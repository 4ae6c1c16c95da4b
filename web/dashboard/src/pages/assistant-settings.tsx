import { useState } from 'preact/hooks';
import { v1, type Assistant, type AssistantPatch, type AssistantSettings } from '../api/client.js';
import { ConfirmButton, CopyButton, ErrorBox, useAction } from '../ui/components.js';
import { navigate } from '../router.js';
import { AnalysisSettingsForm } from './analysis-settings.js';
import { VoiceShapeFields } from './voice-shape.js';

const LANGUAGES: Array<AssistantSettings['language']> = [
  'simple',
  'arabic',
  'armenian',
  'basque',
  'catalan',
  'danish',
  'dutch',
  'english',
  'finnish',
  'french',
  'german',
  'greek',
  'hindi',
  'hungarian',
  'indonesian',
  'irish',
  'italian',
  'lithuanian',
  'nepali',
  'norwegian',
  'portuguese',
  'romanian',
  'russian',
  'serbian',
  'spanish',
  'swedish',
  'tamil',
  'turkish',
  'yiddish',
];

/** Blank means "the deployment default" (null); otherwise a whole number. */
function optionalInt(value: string): number | null {
  return value.trim() === '' ? null : Number(value);
}

/** Settings of one assistant: what it says, how it searches, who may reach it, how it talks; embed; delete. */
export function AssistantSettingsTab({ assistant, onSaved }: { assistant: Assistant; onSaved: () => void }) {
  const s = assistant.settings;
  const [name, setName] = useState(assistant.name);
  const [description, setDescription] = useState(assistant.description ?? '');
  const [welcome, setWelcome] = useState(assistant.welcomeMessage ?? '');
  const [instructions, setInstructions] = useState(assistant.instructions ?? '');
  const [language, setLanguage] = useState(s.language);
  const [domains, setDomains] = useState((s.allowedDomains as string[]).join('\n'));
  const [visitorLimit, setVisitorLimit] = useState(s.visitorRateLimitPerMinute?.toString() ?? '');
  const [assistantLimit, setAssistantLimit] = useState(s.assistantRateLimitPerMinute?.toString() ?? '');
  const [signing, setSigning] = useState(s.requireWidgetSigning);
  const [voice, setVoice] = useState(s.voice);
  const [saved, setSaved] = useState(false);

  const save = useAction(async () => {
    setSaved(false);
    const body: AssistantPatch = {
      name: name.trim(),
      description: description.trim() || null,
      welcomeMessage: welcome.trim() || null,
      instructions: instructions.trim() || null,
      settings: {
        language,
        allowedDomains: domains
          .split(/[\s,]+/)
          .map((d) => d.trim())
          .filter(Boolean),
        visitorRateLimitPerMinute: optionalInt(visitorLimit),
        assistantRateLimitPerMinute: optionalInt(assistantLimit),
        requireWidgetSigning: signing,
        voice,
      },
    };
    await v1.PATCH('/api/v1/assistants/{assistantId}', { params: { path: { assistantId: assistant.id } }, body });
    setSaved(true);
    onSaved();
  });

  const origin = location.origin;
  const snippet = `<script src="${origin}/widget/v1/parley.js" async></script>\n<parley-assistant assistant-id="${assistant.publicId}"></parley-assistant>`;

  return (
    <div class="stack">
      <form
        class="card form"
        aria-label="Assistant settings"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <h2>General</h2>
        <label>
          Name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input maxLength={2000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <label>
          Welcome message
          <input maxLength={1000} value={welcome} onInput={(e) => setWelcome(e.currentTarget.value)} />
        </label>
        <label>
          Instructions
          <textarea
            rows={6}
            maxLength={8000}
            value={instructions}
            onInput={(e) => setInstructions(e.currentTarget.value)}
          />
        </label>
        <label>
          Knowledge language
          <select
            value={language}
            onChange={(e) => setLanguage(e.currentTarget.value as AssistantSettings['language'])}
          >
            {LANGUAGES.map((l) => (
              <option value={l}>{l}</option>
            ))}
          </select>
        </label>

        <h2>Security policy</h2>
        <label>
          Allowed domains{' '}
          <span class="muted">
            (one origin per line, e.g. https://shop.example or https://*.example.com; empty: no widget access)
          </span>
          <textarea rows={3} value={domains} onInput={(e) => setDomains(e.currentTarget.value)} />
        </label>
        <div class="row">
          <label>
            Visitor rate limit per minute <span class="muted">(blank: default)</span>
            <input
              type="number"
              min={1}
              max={100000}
              inputMode="numeric"
              value={visitorLimit}
              onInput={(e) => setVisitorLimit(e.currentTarget.value)}
            />
          </label>
          <label>
            Assistant rate limit per minute <span class="muted">(blank: default)</span>
            <input
              type="number"
              min={1}
              max={100000}
              inputMode="numeric"
              value={assistantLimit}
              onInput={(e) => setAssistantLimit(e.currentTarget.value)}
            />
          </label>
        </div>
        <label class="check">
          <input type="checkbox" checked={signing} onChange={(e) => setSigning(e.currentTarget.checked)} />
          Require signed visitors (X-Parley-Signature)
        </label>

        <h2>Voice</h2>
        <label class="check">
          <input
            type="checkbox"
            checked={voice.enabled}
            onChange={(e) => setVoice({ ...voice, enabled: e.currentTarget.checked })}
          />
          Voice enabled
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={voice.recording === 'on'}
            onChange={(e) => setVoice({ ...voice, recording: e.currentTarget.checked ? 'on' : 'off' })}
          />
          Record calls
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={voice.requireConsent}
            onChange={(e) => setVoice({ ...voice, requireConsent: e.currentTarget.checked })}
          />
          Require recording consent from API callers (always asked of widget visitors)
        </label>
        <div class="row">
          <label>
            Maximum call duration (seconds)
            <input
              type="number"
              min={30}
              max={14400}
              value={voice.maxDurationSeconds}
              onInput={(e) => setVoice({ ...voice, maxDurationSeconds: Number(e.currentTarget.value) })}
            />
          </label>
          <label>
            Idle timeout (seconds)
            <input
              type="number"
              min={10}
              max={3600}
              value={voice.idleTimeoutSeconds}
              onInput={(e) => setVoice({ ...voice, idleTimeoutSeconds: Number(e.currentTarget.value) })}
            />
          </label>
        </div>
        <VoiceShapeFields voice={voice} onChange={setVoice} />
        <ErrorBox error={save.error} title="Could not save" />
        <div class="actions">
          <button type="submit" class="primary" disabled={save.busy}>
            {save.busy ? 'Saving…' : 'Save settings'}
          </button>
          <span role="status" aria-live="polite">
            {saved && !save.busy ? 'Saved.' : ''}
          </span>
        </div>
      </form>

      <AnalysisSettingsForm assistant={assistant} onSaved={onSaved} />

      <section class="card" aria-labelledby="embed-h">
        <h2 id="embed-h">Embed on your site</h2>
        <p>
          Public id: <code>{assistant.publicId}</code> <span class="muted">(a public capability, not a secret)</span>
        </p>
        <p>Paste this into a page on one of the allowed domains:</p>
        <pre class="snippet" aria-label="Widget embed snippet">
          <code>{snippet}</code>
        </pre>
        <CopyButton text={snippet} label="Copy embed snippet" />
      </section>

      <section class="card danger-zone" aria-labelledby="delete-h">
        <h2 id="delete-h">Delete</h2>
        <p>Deleting removes the assistant with its documents and conversations. The embed stops working.</p>
        <ConfirmButton
          label="Delete assistant"
          confirmLabel="Yes, delete it"
          question={`Delete “${assistant.name}” with its documents and conversations? This cannot be undone.`}
          onConfirm={async () => {
            await v1.DELETE('/api/v1/assistants/{assistantId}', { params: { path: { assistantId: assistant.id } } });
            navigate('/assistants');
          }}
        />
      </section>
    </div>
  );
}
