import { useState } from 'preact/hooks';
import { ErrorBox } from '../ui/components.js';

/** A scenario as the API takes it (docs/simulations.md). */
export type ScenarioBody = {
  name: string;
  transport: 'chat' | 'websocket' | 'phone';
  turns: Array<Record<string, unknown>>;
  expect: Array<Record<string, unknown>>;
  toolMocks?: Array<{ tool: string; result?: unknown }>;
};

type TurnKind = 'say' | 'press' | 'wait' | 'interrupt';
type TurnRow = { kind: TurnKind; text: string; ms: string };
type ExpectKind = 'mustSay' | 'neverSay' | 'toolCalled' | 'endReason' | 'maxTurnLatencyMs';
type ExpectRow = { kind: ExpectKind; value: string; args: string };
type MockRow = { tool: string; result: string };

const TURN_KINDS: Array<[TurnKind, string]> = [
  ['say', 'Say'],
  ['press', 'Press keys'],
  ['wait', 'Wait'],
  ['interrupt', 'Interrupt'],
];
const EXPECT_KINDS: Array<[ExpectKind, string]> = [
  ['mustSay', 'Must say'],
  ['neverSay', 'Never says'],
  ['toolCalled', 'Tool called'],
  ['endReason', 'Ends with'],
  ['maxTurnLatencyMs', 'Turn latency at most (ms)'],
];
const EXPECT_PLACEHOLDER: Record<ExpectKind, string> = {
  mustSay: '4.99 euros, or /regex/',
  neverSay: 'free, or /regex/',
  toolCalled: 'tool name',
  endReason: 'client',
  maxTurnLatencyMs: '5000',
};

const NEW_TURN: TurnRow = { kind: 'say', text: '', ms: '' };
const NEW_EXPECT: ExpectRow = { kind: 'mustSay', value: '', args: '' };
const NEW_MOCK: MockRow = { tool: '', result: '' };

export const EXAMPLE = JSON.stringify(
  {
    name: 'price',
    transport: 'chat',
    turns: [{ say: 'How much does the premium plan cost?' }],
    expect: [{ mustSay: '4.99 euros' }, { maxTurnLatencyMs: 5000 }],
  },
  null,
  2,
);

class FormProblem extends Error {}

function json(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new FormProblem(`${what} is not JSON.`);
  }
}

function whole(text: string, what: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n))
    throw new FormProblem(`${what} needs a whole number of milliseconds.`);
  return n;
}

/** The rows as a scenario body; a problem the API could not name (a number, JSON) is refused here, by row. */
function bodyOf(
  name: string,
  transport: ScenarioBody['transport'],
  turns: TurnRow[],
  expect: ExpectRow[],
  mocks: MockRow[],
) {
  const body: ScenarioBody = {
    name,
    transport,
    turns: turns.map((r, i) =>
      r.kind === 'wait'
        ? { wait: whole(r.ms, `Turn ${i + 1}`) }
        : r.kind === 'interrupt'
          ? { interrupt: r.text, afterMs: whole(r.ms, `Turn ${i + 1}`) }
          : { [r.kind]: r.text },
    ),
    expect: expect.map((r, i) => {
      if (r.kind === 'maxTurnLatencyMs') return { maxTurnLatencyMs: whole(r.value, `Expectation ${i + 1}`) };
      if (r.kind !== 'toolCalled') return { [r.kind]: r.value };
      const args = r.args.trim() === '' ? undefined : json(r.args, `Expectation ${i + 1}'s arguments`);
      return { toolCalled: args === undefined ? { name: r.value } : { name: r.value, arguments: args } };
    }),
  };
  if (mocks.length > 0)
    body.toolMocks = mocks.map((m, i) => ({
      tool: m.tool,
      result: m.result.trim() === '' ? null : json(m.result, `Tool mock ${i + 1}'s result`),
    }));
  return body;
}

/**
 * Writes a scenario: a form (name, transport, turns and expectations as rows, tool mocks) or, as the advanced mode,
 * the JSON the API takes (every expectation and field).
 */
export function ScenarioEditor({ onSave }: { onSave: (body: ScenarioBody) => Promise<void> }) {
  const [mode, setMode] = useState<'form' | 'json'>('form');
  const [name, setName] = useState('');
  const [transport, setTransport] = useState<ScenarioBody['transport']>('chat');
  const [turns, setTurns] = useState<TurnRow[]>([NEW_TURN]);
  const [expect, setExpect] = useState<ExpectRow[]>([NEW_EXPECT]);
  const [mocks, setMocks] = useState<MockRow[]>([]);
  const [text, setText] = useState(EXAMPLE);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const setTurn = (i: number, patch: Partial<TurnRow>) =>
    setTurns(turns.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const setRow = (i: number, patch: Partial<ExpectRow>) =>
    setExpect(expect.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const setMock = (i: number, patch: Partial<MockRow>) =>
    setMocks(mocks.map((r, j) => (j === i ? { ...r, ...patch } : r)));

  const submit = async () => {
    let body: ScenarioBody;
    try {
      body =
        mode === 'json' ? (json(text, 'The scenario') as ScenarioBody) : bodyOf(name, transport, turns, expect, mocks);
      setProblem(null);
    } catch (err) {
      setProblem(err instanceof FormProblem ? err.message : String(err));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await onSave(body);
      // Saved: the form is blank for the next one.
      setName('');
      setTurns([NEW_TURN]);
      setExpect([NEW_EXPECT]);
      setMocks([]);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const toJson = () => {
    // The form's scenario carried over, when it reads as one.
    try {
      setText(JSON.stringify(bodyOf(name, transport, turns, expect, mocks), null, 2));
    } catch {
      /* keep the JSON as it was */
    }
    setProblem(null);
    setMode('json');
  };

  return (
    <form
      class="form"
      aria-labelledby="new-scenario-h"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3 id="new-scenario-h">Write a scenario</h3>
      <div class="actions">
        <button type="button" aria-pressed={mode === 'form'} onClick={() => setMode('form')}>
          Form
        </button>
        <button type="button" aria-pressed={mode === 'json'} onClick={toJson}>
          JSON (advanced)
        </button>
      </div>
      {mode === 'json' ? (
        <label>
          New scenario <span class="muted">(JSON: name, transport, turns, expect, toolMocks)</span>
          <textarea rows={10} value={text} onInput={(e) => setText(e.currentTarget.value)} spellcheck={false} />
        </label>
      ) : (
        <>
          <div class="row">
            <label>
              Scenario name
              <input value={name} maxLength={100} required onInput={(e) => setName(e.currentTarget.value)} />
            </label>
            <label>
              Transport
              <select
                aria-label="Transport"
                value={transport}
                onChange={(e) => setTransport(e.currentTarget.value as ScenarioBody['transport'])}
              >
                <option value="chat">Chat</option>
                <option value="websocket">Voice (websocket)</option>
                <option value="phone">Phone</option>
              </select>
            </label>
          </div>
          <fieldset>
            <legend>Turns (what the caller does, in order)</legend>
            {turns.map((r, i) => (
              <div class="row" key={i}>
                <label>
                  Turn {i + 1}
                  <select
                    aria-label={`Turn ${i + 1}`}
                    value={r.kind}
                    onChange={(e) => setTurn(i, { kind: e.currentTarget.value as TurnKind })}
                  >
                    {TURN_KINDS.map(([value, label]) => (
                      <option value={value}>{label}</option>
                    ))}
                  </select>
                </label>
                {r.kind !== 'wait' && (
                  <label>
                    Turn {i + 1} {r.kind === 'press' ? 'keys' : 'words'}
                    <input
                      value={r.text}
                      placeholder={r.kind === 'press' ? '1#' : 'How much does the premium plan cost?'}
                      onInput={(e) => setTurn(i, { text: e.currentTarget.value })}
                    />
                  </label>
                )}
                {(r.kind === 'wait' || r.kind === 'interrupt') && (
                  <label>
                    Turn {i + 1} {r.kind === 'wait' ? 'milliseconds' : 'after the answer begins (ms)'}
                    <input
                      inputMode="numeric"
                      value={r.ms}
                      onInput={(e) => setTurn(i, { ms: e.currentTarget.value })}
                    />
                  </label>
                )}
                <button type="button" onClick={() => setTurns(turns.filter((_, j) => j !== i))}>
                  Remove turn {i + 1}
                </button>
              </div>
            ))}
            <button type="button" onClick={() => setTurns([...turns, NEW_TURN])}>
              Add turn
            </button>
          </fieldset>
          <fieldset>
            <legend>Expectations</legend>
            {expect.map((r, i) => (
              <div class="row" key={i}>
                <label>
                  Expectation {i + 1}
                  <select
                    aria-label={`Expectation ${i + 1}`}
                    value={r.kind}
                    onChange={(e) => setRow(i, { kind: e.currentTarget.value as ExpectKind })}
                  >
                    {EXPECT_KINDS.map(([value, label]) => (
                      <option value={value}>{label}</option>
                    ))}
                  </select>
                </label>
                <label>
                  Expectation {i + 1} value
                  <input
                    value={r.value}
                    placeholder={EXPECT_PLACEHOLDER[r.kind]}
                    onInput={(e) => setRow(i, { value: e.currentTarget.value })}
                  />
                </label>
                {r.kind === 'toolCalled' && (
                  <label>
                    Expectation {i + 1} arguments <span class="muted">(JSON subset, optional)</span>
                    <input
                      value={r.args}
                      placeholder='{"orderId":"12345"}'
                      onInput={(e) => setRow(i, { args: e.currentTarget.value })}
                    />
                  </label>
                )}
                <button type="button" onClick={() => setExpect(expect.filter((_, j) => j !== i))}>
                  Remove expectation {i + 1}
                </button>
              </div>
            ))}
            <button type="button" onClick={() => setExpect([...expect, NEW_EXPECT])}>
              Add expectation
            </button>
          </fieldset>
          <fieldset>
            <legend>Tool mocks (answer instead of your server)</legend>
            {mocks.map((m, i) => (
              <div class="row" key={i}>
                <label>
                  Mock {i + 1} tool
                  <input value={m.tool} onInput={(e) => setMock(i, { tool: e.currentTarget.value })} />
                </label>
                <label>
                  Mock {i + 1} result <span class="muted">(JSON)</span>
                  <input
                    value={m.result}
                    placeholder='{"status":"delivered"}'
                    onInput={(e) => setMock(i, { result: e.currentTarget.value })}
                  />
                </label>
                <button type="button" onClick={() => setMocks(mocks.filter((_, j) => j !== i))}>
                  Remove mock {i + 1}
                </button>
              </div>
            ))}
            <button type="button" onClick={() => setMocks([...mocks, NEW_MOCK])}>
              Add tool mock
            </button>
          </fieldset>
        </>
      )}
      {problem && (
        <p class="doc-error" role="alert">
          {problem}
        </p>
      )}
      <ErrorBox error={error} title="Could not save the scenario" />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Save scenario
        </button>
      </div>
    </form>
  );
}
