import { useState } from 'preact/hooks';
import { v1, type Tool, type ToolTestResult } from '../api/client.js';
import { ErrorBox, useAction } from '../ui/components.js';

/** Sample arguments to start from: each property of the schema with a value of its type. */
function sampleArguments(parameters: Record<string, unknown>): string {
  const properties = (parameters['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  const sample: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(properties)) {
    const values = p['enum'];
    sample[name] = Array.isArray(values)
      ? values[0]
      : p['type'] === 'integer' || p['type'] === 'number'
        ? 0
        : p['type'] === 'boolean'
          ? false
          : p['type'] === 'array'
            ? []
            : p['type'] === 'object'
              ? {}
              : '';
  }
  return JSON.stringify(sample, null, 2);
}

/**
 * The Tools tab's Test: one sample call to the owner's server (POST .../tools/{toolId}/test, signed as a real call,
 * stored nowhere) and what it answered: the result, or why it failed, and how long it took.
 */
export function ToolTest({ assistantId, tool, onClose }: { assistantId: string; tool: Tool; onClose: () => void }) {
  const [args, setArgs] = useState(() => sampleArguments(tool.parameters));
  const [answer, setAnswer] = useState<ToolTestResult | null>(null);
  const send = useAction(async () => {
    setAnswer(null);
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(args) as Record<string, unknown>;
    } catch {
      throw new Error('The arguments are not valid JSON.');
    }
    setAnswer(
      await v1.POST('/api/v1/assistants/{assistantId}/tools/{toolId}/test', {
        params: { path: { assistantId, toolId: tool.id } },
        body: { arguments: parsed as never },
      }),
    );
  });
  return (
    <form
      class="card form"
      aria-label={`Test ${tool.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void send.run();
      }}
    >
      <h3>Test {tool.name}</h3>
      <p class="muted small">
        Sends one signed sample call to <code>{tool.url}</code> (source “test”); it is not stored with any conversation.
      </p>
      <label>
        Arguments (JSON)
        <textarea rows={5} value={args} onInput={(e) => setArgs(e.currentTarget.value)} />
      </label>
      <ErrorBox error={send.error} title="The test call was not sent" />
      {answer && (
        <div role="status" aria-label="Test answer" class={answer.ok ? 'tool-answer' : 'tool-answer tool-error'}>
          <p>
            <strong>{answer.ok ? 'Succeeded' : 'Failed'}</strong> in {answer.ms} ms
            {answer.ok ? '' : `: ${answer.error ?? 'unknown error'}`}
          </p>
          {answer.ok && (
            <p>
              Result: <code>{JSON.stringify(answer.result ?? null)}</code>
            </p>
          )}
        </div>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={send.busy}>
          {send.busy ? 'Sending…' : 'Send test call'}
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
