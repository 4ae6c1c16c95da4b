import { useState } from 'preact/hooks';
import { v1, type Assistant } from '../api/client.js';
import { ConfirmButton, CopyButton, Empty, ErrorBox, Loaded, Table, useAction, useLoad } from '../ui/components.js';

const EMPTY_SCHEMA = '{\n  "type": "object",\n  "properties": {},\n  "required": []\n}';

/**
 * An assistant's tools (docs/tools.md): the owner's endpoints it may call, with their calls, errors and latency over
 * the last 7 days; add one (its signing secret is shown once, with the first tool) or delete one.
 */
export function ToolsTab({ assistant }: { assistant: Assistant }) {
  const path = { assistantId: assistant.id };
  const load = useLoad(async () => {
    const [list, stats] = await Promise.all([
      v1.GET('/api/v1/assistants/{assistantId}/tools', { params: { path } }),
      v1.GET('/api/v1/assistants/{assistantId}/tool-analytics', { params: { path, query: { days: 7 } } }),
    ]);
    return { tools: list.tools, stats: stats.tools };
  }, [assistant.id]);
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <section aria-labelledby="tools-h">
      <h2 id="tools-h">Tools</h2>
      <p class="muted">
        Your own endpoints the assistant may call in chat and voice: signed requests, checked arguments.
      </p>
      {secret && (
        <div class="card secret" role="region" aria-label="Tool secret">
          <p class="warning" role="alert">
            The tool signing secret is shown only now. Verify every tool request with it.
          </p>
          <p>
            <code class="secret-value" aria-label="Tool signing secret">
              {secret}
            </code>
          </p>
          <CopyButton text={secret} label="Copy secret" />{' '}
          <button type="button" onClick={() => setSecret(null)}>
            I have stored it
          </button>
        </div>
      )}
      <Loaded load={load} label="Loading tools…">
        {({ tools, stats }) =>
          tools.length === 0 ? (
            <Empty>
              <p>No tools yet.</p>
            </Empty>
          ) : (
            <Table
              columns={[
                'Name',
                'Mode',
                'URL',
                'Calls (7 days)',
                'Errors',
                'p50 / p95',
                <span class="sr-only">Actions</span>,
              ]}
            >
              {tools.map((tool) => {
                const s = stats.find((x) => x.name === tool.name);
                return (
                  <tr>
                    <td>{tool.name}</td>
                    <td>{tool.mode}</td>
                    <td>
                      <code>{tool.url}</code>
                    </td>
                    <td>{s?.calls ?? 0}</td>
                    <td>{s?.errors ?? 0}</td>
                    <td>{s?.p50Ms != null ? `${s.p50Ms} / ${s.p95Ms ?? '–'} ms` : '–'}</td>
                    <td>
                      <ConfirmButton
                        label="Delete"
                        name={`Delete ${tool.name}`}
                        confirmLabel="Yes, delete"
                        question={`Delete the tool “${tool.name}”? Its past calls stay in their conversations.`}
                        onConfirm={async () => {
                          await v1.DELETE('/api/v1/assistants/{assistantId}/tools/{toolId}', {
                            params: { path: { ...path, toolId: tool.id } },
                          });
                          await load.reload();
                        }}
                      />
                    </td>
                  </tr>
                );
              })}
            </Table>
          )
        }
      </Loaded>
      <AddToolForm
        assistantId={assistant.id}
        onAdded={(newSecret) => {
          if (newSecret) setSecret(newSecret);
          void load.reload();
        }}
      />
    </section>
  );
}

function AddToolForm({ assistantId, onAdded }: { assistantId: string; onAdded: (secret?: string) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [url, setUrl] = useState('');
  const [schema, setSchema] = useState(EMPTY_SCHEMA);
  const [mode, setMode] = useState<'sync' | 'async'>('sync');
  const [start, setStart] = useState('');
  const [failed, setFailed] = useState('');
  const [examples, setExamples] = useState('');
  const add = useAction(async () => {
    let parameters: Record<string, unknown>;
    try {
      parameters = JSON.parse(schema) as Record<string, unknown>;
    } catch {
      throw new Error('The parameters are not valid JSON.');
    }
    const messages = {
      ...(start.trim() ? { start: start.trim() } : {}),
      ...(failed.trim() ? { failed: failed.trim() } : {}),
    };
    const created = await v1.POST('/api/v1/assistants/{assistantId}/tools', {
      params: { path: { assistantId } },
      body: {
        name: name.trim(),
        description: description.trim(),
        url: url.trim(),
        parameters: parameters as never,
        mode,
        messages,
        examples: examples
          .split('\n')
          .map((e) => e.trim())
          .filter(Boolean),
      },
    });
    setName('');
    setDescription('');
    setUrl('');
    setSchema(EMPTY_SCHEMA);
    onAdded(created.secret);
  });
  return (
    <form
      class="card form"
      aria-label="Add a tool"
      onSubmit={(e) => {
        e.preventDefault();
        void add.run();
      }}
    >
      <h3>Add a tool</h3>
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
      <ErrorBox error={add.error} title="Could not add the tool" />
      <div class="actions">
        <button type="submit" class="primary" disabled={add.busy}>
          {add.busy ? 'Adding…' : 'Add tool'}
        </button>
      </div>
    </form>
  );
}
