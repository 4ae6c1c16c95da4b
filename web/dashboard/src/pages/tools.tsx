import { useState } from 'preact/hooks';
import { v1, type Assistant, type Tool } from '../api/client.js';
import { ConfirmButton, CopyButton, Empty, Loaded, Table, useLoad } from '../ui/components.js';
import { ToolForm } from './tool-form.js';
import { ToolTest } from './tool-test.js';

/**
 * An assistant's tools (docs/tools.md): the owner's endpoints it may call, with their calls, errors and latency over
 * the last 7 days; add one (its signing secret is shown once, with the first tool), edit, test or delete one.
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
  /** The tool being edited or tested (one panel at a time, under the table). */
  const [open, setOpen] = useState<{ toolId: string; panel: 'edit' | 'test' } | null>(null);
  /** The open Edit or Test panel, under the table. */
  const panelOf = (tools: Tool[]) => {
    const tool = tools.find((t) => t.id === open?.toolId);
    if (!tool || !open) return null;
    return open.panel === 'edit' ? (
      <ToolForm
        key={tool.id + tool.updatedAt}
        assistantId={assistant.id}
        tool={tool}
        onSaved={() => {
          setOpen(null);
          void load.reload();
        }}
        onCancel={() => setOpen(null)}
      />
    ) : (
      <ToolTest key={tool.id} assistantId={assistant.id} tool={tool} onClose={() => setOpen(null)} />
    );
  };
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
        {({ tools, stats }) => (
          <>
            {tools.length === 0 ? (
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
                      <td class="actions">
                        <button
                          type="button"
                          aria-label={`Edit ${tool.name}`}
                          onClick={() => setOpen({ toolId: tool.id, panel: 'edit' })}
                        >
                          Edit
                        </button>
                        <button
                          type="button"
                          aria-label={`Test ${tool.name}`}
                          onClick={() => setOpen({ toolId: tool.id, panel: 'test' })}
                        >
                          Test
                        </button>
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
            )}
            {panelOf(tools)}
          </>
        )}
      </Loaded>
      <ToolForm
        assistantId={assistant.id}
        onSaved={(newSecret) => {
          if (newSecret) setSecret(newSecret);
          void load.reload();
        }}
      />
    </section>
  );
}
