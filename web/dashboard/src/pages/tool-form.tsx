import { useState } from 'preact/hooks';
import { v1, type Tool } from '../api/client.js';
import { ErrorBox, useAction } from '../ui/components.js';

const EMPTY_SCHEMA = '{\n  "type": "object",\n  "properties": {},\n  "required": []\n}';

/**
 * Adds a tool, or (given `tool`) edits one: PATCH with every field of the form; the `delayed` messages, which the form
 * does not show, are kept as they were.
 */
export function ToolForm({
  assistantId,
  tool,
  onSaved,
  onCancel,
}: {
  assistantId: string;
  tool?: Tool;
  onSaved: (secret?: string) => void;
  onCancel?: () => void;
}) {
  const [name, setName] = useState(tool?.name ?? '');
  const [description, setDescription] = useState(tool?.description ?? '');
  const [url, setUrl] = useState(tool?.url ?? '');
  const [schema, setSchema] = useState(tool ? JSON.stringify(tool.parameters, null, 2) : EMPTY_SCHEMA);
  const [mode, setMode] = useState<'sync' | 'async'>(tool?.mode ?? 'sync');
  const [timeout, setTimeoutMs] = useState(String(tool?.timeoutMs ?? 10_000));
  const [start, setStart] = useState(tool?.messages.start ?? '');
  const [failed, setFailed] = useState(tool?.messages.failed ?? '');
  const [examples, setExamples] = useState((tool?.examples ?? []).join('\n'));
  const save = useAction(async () => {
    let parameters: Record<string, unknown>;
    try {
      parameters = JSON.parse(schema) as Record<string, unknown>;
    } catch {
      throw new Error('The parameters are not valid JSON.');
    }
    const messages = {
      ...(tool?.messages.delayed ? { delayed: tool.messages.delayed } : {}),
      ...(start.trim() ? { start: start.trim() } : {}),
      ...(failed.trim() ? { failed: failed.trim() } : {}),
    };
    const body = {
      name: name.trim(),
      description: description.trim(),
      url: url.trim(),
      parameters: parameters as never,
      mode,
      timeoutMs: Number(timeout),
      messages,
      examples: examples
        .split('\n')
        .map((e) => e.trim())
        .filter(Boolean),
    };
    if (tool) {
      await v1.PATCH('/api/v1/assistants/{assistantId}/tools/{toolId}', {
        params: { path: { assistantId, toolId: tool.id } },
        body,
      });
      onSaved();
      return;
    }
    const created = await v1.POST('/api/v1/assistants/{assistantId}/tools', {
      params: { path: { assistantId } },
      body,
    });
    setName('');
    setDescription('');
    setUrl('');
    setSchema(EMPTY_SCHEMA);
    onSaved(created.secret);
  });
  const title = tool ? `Edit ${tool.name}` : 'Add a tool';
  return (
    <form
      class="card form"
      aria-label={title}
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <h3>{title}</h3>
      <label>
        Name (snake_case)
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <input required value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        URL
        <input required type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </label>
      <label>
        Parameters (JSON Schema)
        <textarea rows={6} value={schema} onInput={(e) => setSchema(e.currentTarget.value)} />
      </label>
      <label>
        Mode
        <select value={mode} onChange={(e) => setMode(e.currentTarget.value as 'sync' | 'async')}>
          <option value="sync">sync: the answer waits for the result</option>
          <option value="async">async: the result comes later</option>
        </select>
      </label>
      <label>
        Timeout (ms)
        <input
          type="number"
          min={1000}
          max={60000}
          step={100}
          required
          value={timeout}
          onInput={(e) => setTimeoutMs(e.currentTarget.value)}
        />
      </label>
      <label>
        Start message
        <input value={start} onInput={(e) => setStart(e.currentTarget.value)} />
      </label>
      <label>
        Failed message
        <input value={failed} onInput={(e) => setFailed(e.currentTarget.value)} />
      </label>
      <label>
        Examples (one per line, with {'{slots}'})
        <textarea rows={3} value={examples} onInput={(e) => setExamples(e.currentTarget.value)} />
      </label>
      <ErrorBox error={save.error} title={tool ? 'Could not save the tool' : 'Could not add the tool'} />
      <div class="actions">
        <button type="submit" class="primary" disabled={save.busy}>
          {tool ? (save.busy ? 'Saving…' : 'Save tool') : save.busy ? 'Adding…' : 'Add tool'}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
