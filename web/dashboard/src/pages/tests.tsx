import { useState } from 'preact/hooks';
import { v1, type Assistant } from '../api/client.js';
import { href } from '../router.js';
import {
  ConfirmButton,
  Empty,
  ErrorBox,
  Loaded,
  StatusBadge,
  Table,
  useAction,
  useLoad,
  usePoll,
} from '../ui/components.js';
import { ScenarioCalls } from './scenario-calls.js';
import { ScenarioEditor, type ScenarioBody } from './scenario-editor.js';

type RunAnswer = Awaited<ReturnType<typeof readRun>>;
type History = { name: string; results: Awaited<ReturnType<typeof readHistory>>['results'] };

function readHistory(assistantId: string, scenarioId: string) {
  return v1.GET('/api/v1/assistants/{assistantId}/scenarios/{scenarioId}/results', {
    params: { path: { assistantId, scenarioId } },
  });
}
function createScenario(assistantId: string, body: ScenarioBody) {
  return v1.POST('/api/v1/assistants/{assistantId}/scenarios', {
    params: { path: { assistantId } },
    body: body as never,
  });
}

function readRun(assistantId: string, runId: string) {
  return v1.GET('/api/v1/assistants/{assistantId}/scenario-runs/{runId}', {
    params: { path: { assistantId, runId } },
  });
}

const pct = (rate: number | null | undefined) => (rate == null ? '—' : `${Math.round(rate * 100)} %`);
const ms = (value: number | null | undefined) => (value == null ? '—' : `${Math.round(value)} ms`);

/**
 * Tests: scenarios (a scripted caller and what the assistant must do), written in a form or as JSON, run over the
 * real chat and voice paths; each verdict with its evidence, latency and transcript, a voice result's call timeline
 * and recording; the run history (docs/simulations.md).
 */
export function TestsTab({ assistant }: { assistant: Assistant }) {
  const assistantId = assistant.id;
  const scenarios = useLoad(
    () => v1.GET('/api/v1/assistants/{assistantId}/scenarios', { params: { path: { assistantId } } }),
    [assistantId],
  );
  const runs = useLoad(
    () => v1.GET('/api/v1/assistants/{assistantId}/scenario-runs', { params: { path: { assistantId } } }),
    [assistantId],
  );
  const [shown, setShown] = useState<RunAnswer | null>(null);
  const [history, setHistory] = useState<History | null>(null);
  const start = useAction(async (only?: string) => {
    const { run } = await v1.POST('/api/v1/assistants/{assistantId}/scenario-runs', {
      params: { path: { assistantId } },
      body: only === undefined ? { concurrency: 3 } : { scenarios: [only], concurrency: 1 },
    });
    setShown({ run, results: [] });
    await runs.reload();
  });
  const remove = useAction(async (scenarioId: string) => {
    await v1.DELETE('/api/v1/assistants/{assistantId}/scenarios/{scenarioId}', {
      params: { path: { assistantId, scenarioId } },
    });
    await scenarios.reload();
  });
  const running = shown?.run.status === 'running';
  usePoll(running, 1500, () => {
    if (!shown) return;
    readRun(assistantId, shown.run.id).then(
      (answer) => {
        setShown(answer);
        if (answer.run.status !== 'running') void runs.reload();
      },
      () => undefined,
    );
  });

  return (
    <section class="card" aria-labelledby="tests-h">
      <h2 id="tests-h">Tests</h2>
      <p class="muted">
        Scenarios run as conversations of source <code>test</code> (outside your voice minutes). In CI:{' '}
        <code>
          PARLEY_API_KEY=… npx parley-test --url {location.origin} --assistant {assistant.publicId}
        </code>
      </p>
      <Loaded load={scenarios} label="Loading scenarios…">
        {({ scenarios: list }) =>
          list.length === 0 ? (
            <Empty>No scenarios yet: write one below.</Empty>
          ) : (
            <Table columns={['Scenario', 'Transport', 'Turns', 'Expectations', '']} label="Scenarios">
              {list.map((s) => (
                <tr>
                  <td>{s.name}</td>
                  <td>{s.transport}</td>
                  <td>{s.turns.length}</td>
                  <td>{s.expect.map((e) => Object.keys(e)[0]).join(', ')}</td>
                  <td>
                    <button type="button" disabled={start.busy || running} onClick={() => void start.run(s.id)}>
                      Run
                    </button>{' '}
                    <button
                      type="button"
                      onClick={() =>
                        void readHistory(assistantId, s.id).then(({ results }) => setHistory({ name: s.name, results }))
                      }
                    >
                      History
                    </button>{' '}
                    <ConfirmButton
                      label="Delete"
                      confirmLabel="Yes, delete"
                      question={`Delete the scenario ${s.name}? Its past results stay.`}
                      name={s.name}
                      onConfirm={() => remove.run(s.id)}
                    />
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
      <div class="actions">
        <button type="button" class="primary" disabled={start.busy || running} onClick={() => void start.run()}>
          Run all scenarios
        </button>
      </div>
      <ErrorBox error={start.error ?? remove.error} title="Could not run" />
      {history && (
        <Table columns={['Run', 'Result', 'Failed expectations']} label={`History of ${history.name}`}>
          {history.results.map((r) => (
            <tr>
              <td>{new Date(r.runCreatedAt).toLocaleString()}</td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td>
                {r.error ??
                  (r.verdicts
                    .filter((v) => !v.passed)
                    .map((v) => `${JSON.stringify(v.expectation)}: ${v.evidence}`)
                    .join('; ') ||
                    '—')}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {shown && <RunView answer={shown} assistantId={assistantId} />}

      <ScenarioEditor
        onSave={async (body) => {
          await createScenario(assistantId, body);
          await scenarios.reload();
        }}
      />

      <h3>History</h3>
      <Loaded load={runs} label="Loading runs…">
        {({ runs: list }) =>
          list.length === 0 ? (
            <Empty>No runs yet.</Empty>
          ) : (
            <Table columns={['Started', 'Status', 'Scenarios', 'Pass rate', 'Turn p50 / p95', '']} label="Runs">
              {list.map((r) => (
                <tr>
                  <td>{new Date(r.createdAt).toLocaleString()}</td>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                  <td>{r.scenarioCount}</td>
                  <td>{pct(r.figures?.passRate)}</td>
                  <td>
                    {ms(r.figures?.turnLatencyP50Ms)} / {ms(r.figures?.turnLatencyP95Ms)}
                  </td>
                  <td>
                    <button type="button" onClick={() => void readRun(assistantId, r.id).then(setShown)}>
                      Show
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </section>
  );
}

function RunView({ answer, assistantId }: { answer: RunAnswer; assistantId: string }) {
  const { run, results } = answer;
  return (
    <div aria-live="polite" class="scenario-run">
      <p>
        <StatusBadge status={run.status} /> {run.completedCount} of {run.scenarioCount} scenarios · pass rate{' '}
        {pct(run.figures?.passRate)} · turn latency p50 {ms(run.figures?.turnLatencyP50Ms)}, p95{' '}
        {ms(run.figures?.turnLatencyP95Ms)} · first audio p50 {ms(run.figures?.firstAudioP50Ms)} · stop after interrupt
        p50 {ms(run.figures?.stopAfterInterruptP50Ms)}
      </p>
      {results.map((r) => (
        <details open={r.status === 'failed' || r.status === 'error'}>
          <summary>
            <StatusBadge status={r.status} /> {r.name} <span class="muted">({r.transport})</span>
          </summary>
          {r.error && <p class="doc-error">{r.error}</p>}
          <p class="muted small">{latencyLine(r.figures)}</p>
          {r.conversationId && (
            <p>
              <a href={href(`/assistants/${encodeURIComponent(assistantId)}/conversations/${r.conversationId}`)}>
                Open the conversation
              </a>{' '}
              <span class="muted">(its calls' timelines, and recordings when the assistant records)</span>
            </p>
          )}
          {r.conversationId && r.transport !== 'chat' && r.status !== 'running' && r.status !== 'pending' && (
            <ScenarioCalls conversationId={r.conversationId} name={r.name} />
          )}
          {r.verdicts.length > 0 && (
            <Table columns={['Expectation', 'Verdict', 'Evidence']} label={`Verdicts of ${r.name}`}>
              {r.verdicts.map((v) => (
                <tr>
                  <td>
                    <code>{JSON.stringify(v.expectation)}</code>
                  </td>
                  <td>{v.passed ? 'pass' : 'FAIL'}</td>
                  <td>{v.evidence}</td>
                </tr>
              ))}
            </Table>
          )}
          {r.transcript.length > 0 && (
            <ol class="transcript">
              {r.transcript.map((line) => (
                <li>
                  <span class="muted">{(line.atMs / 1000).toFixed(1)} s</span> <strong>{line.role}</strong>: {line.text}
                  {line.heard !== undefined && <span class="muted"> (heard: “{line.heard}”)</span>}
                  {line.tool && (
                    <span class="muted">
                      {' '}
                      {JSON.stringify(line.tool.arguments)} → {JSON.stringify(line.tool.result)}
                    </span>
                  )}
                </li>
              ))}
            </ol>
          )}
        </details>
      ))}
    </div>
  );
}

/** A result's latencies as its caller measured them. */
function latencyLine(figures: RunAnswer['results'][number]['figures']): string {
  const turns = figures.turnLatenciesMs ?? [];
  const stops = figures.stopAfterInterruptMs ?? [];
  const parts = [`turn latency ${turns.length === 0 ? '—' : turns.map((t) => ms(t)).join(', ')}`];
  if (figures.firstAudioMs != null) parts.push(`first audio ${ms(figures.firstAudioMs)}`);
  if (stops.length > 0) parts.push(`stopped ${stops.map((t) => ms(t)).join(', ')} after an interrupt`);
  if (figures.endReason != null) parts.push(`ended: ${figures.endReason}`);
  return parts.join(' · ');
}
