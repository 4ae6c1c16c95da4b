import { useState } from 'preact/hooks';
import { v1, type Assistant, type AssistantSettings } from '../api/client.js';
import { ErrorBox, useAction } from '../ui/components.js';

type Analysis = AssistantSettings['analysis'];
type Schema = NonNullable<Analysis['structuredData']>['schema'];
type FieldSpec = Schema['properties'][string];
type Rubric = NonNullable<Analysis['successEvaluation']>['rubric'];

/** One row of the schema editor: an enum is its own "type" here (the words it may take, comma-separated). */
interface FieldRow {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'enum';
  values: string;
  format: '' | 'email' | 'date' | 'date-time';
  required: boolean;
  description: string;
}

function rowsOf(schema: Schema | undefined): FieldRow[] {
  if (!schema) return [];
  return Object.entries(schema.properties).map(([name, p]) => ({
    name,
    type: p.enum !== undefined ? 'enum' : (p.type ?? 'string'),
    values: (p.enum ?? []).join(', '),
    format: p.format ?? '',
    required: (schema.required ?? []).includes(name),
    description: p.description ?? '',
  }));
}

/** The rows as the owner's JSON Schema (the server validates it and names what is wrong). */
function schemaOf(rows: FieldRow[]): Schema {
  const properties: Record<string, FieldSpec> = {};
  for (const r of rows) {
    const spec: FieldSpec =
      r.type === 'enum'
        ? {
            enum: r.values
              .split(',')
              .map((v) => v.trim())
              .filter(Boolean),
          }
        : { type: r.type, ...(r.type === 'string' && r.format ? { format: r.format } : {}) };
    properties[r.name.trim()] = r.description.trim() ? { ...spec, description: r.description.trim() } : spec;
  }
  const required = rows.filter((r) => r.required).map((r) => r.name.trim());
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

const NEW_FIELD: FieldRow = { name: '', type: 'string', values: '', format: '', required: false, description: '' };

/** The assistant's post-call analysis: which steps run, the fields to fill, the success rubric, when a chat ends. */
export function AnalysisSettingsForm({ assistant, onSaved }: { assistant: Assistant; onSaved: () => void }) {
  const a = assistant.settings.analysis;
  const [summary, setSummary] = useState(a.summary);
  const [sentiment, setSentiment] = useState(a.sentiment);
  const [rows, setRows] = useState<FieldRow[]>(rowsOf(a.structuredData?.schema));
  const [dataInstructions, setDataInstructions] = useState(a.structuredData?.instructions ?? '');
  const [rubric, setRubric] = useState<'' | Rubric>(a.successEvaluation?.rubric ?? '');
  const [successInstructions, setSuccessInstructions] = useState(a.successEvaluation?.instructions ?? '');
  const [timeoutMs, setTimeoutMs] = useState(a.timeoutMs);
  const [voice, setVoice] = useState(a.for.includes('voice'));
  const [chat, setChat] = useState(a.for.includes('chat'));
  const [idle, setIdle] = useState(a.chatIdleMinutes);
  const [saved, setSaved] = useState(false);
  const setRow = (i: number, patch: Partial<FieldRow>) =>
    setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));

  const save = useAction(async () => {
    setSaved(false);
    const analysis: Analysis = {
      summary,
      sentiment,
      structuredData:
        rows.length === 0
          ? null
          : { schema: schemaOf(rows), ...(dataInstructions.trim() ? { instructions: dataInstructions.trim() } : {}) },
      successEvaluation:
        rubric === ''
          ? null
          : { rubric, ...(successInstructions.trim() ? { instructions: successInstructions.trim() } : {}) },
      timeoutMs,
      for: [...(voice ? (['voice'] as const) : []), ...(chat ? (['chat'] as const) : [])],
      chatIdleMinutes: idle,
    };
    await v1.PATCH('/api/v1/assistants/{assistantId}', {
      params: { path: { assistantId: assistant.id } },
      body: { settings: { analysis } },
    });
    setSaved(true);
    onSaved();
  });

  return (
    <form
      class="card form"
      aria-label="Analysis settings"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <h2>Post-call analysis</h2>
      <p class="muted">
        Read once a call settles or a chat goes quiet; sent as the conversation.analyzed webhook. A hosted chat model is
        billed as this assistant's usage; the offline engine is free.
      </p>
      <label class="check">
        <input type="checkbox" checked={summary} onChange={(e) => setSummary(e.currentTarget.checked)} /> Summary
      </label>
      <label class="check">
        <input type="checkbox" checked={sentiment} onChange={(e) => setSentiment(e.currentTarget.checked)} /> Sentiment
      </label>
      <fieldset>
        <legend>Structured data (at most 20 fields)</legend>
        {rows.map((r, i) => (
          <div class="row" key={i}>
            <label>
              Field {i + 1} name
              <input
                value={r.name}
                maxLength={64}
                required
                onInput={(e) => setRow(i, { name: e.currentTarget.value })}
              />
            </label>
            <label>
              Field {i + 1} type
              <select value={r.type} onChange={(e) => setRow(i, { type: e.currentTarget.value as FieldRow['type'] })}>
                <option value="string">Text</option>
                <option value="integer">Whole number</option>
                <option value="number">Number</option>
                <option value="boolean">Yes / no</option>
                <option value="enum">One of</option>
              </select>
            </label>
            {r.type === 'enum' && (
              <label>
                Field {i + 1} values
                <input
                  value={r.values}
                  placeholder="basic, premium"
                  onInput={(e) => setRow(i, { values: e.currentTarget.value })}
                />
              </label>
            )}
            {r.type === 'string' && (
              <label>
                Field {i + 1} format
                <select
                  value={r.format}
                  onChange={(e) => setRow(i, { format: e.currentTarget.value as FieldRow['format'] })}
                >
                  <option value="">Any text</option>
                  <option value="email">Email</option>
                  <option value="date">Date</option>
                  <option value="date-time">Date and time</option>
                </select>
              </label>
            )}
            <label class="check">
              <input
                type="checkbox"
                checked={r.required}
                onChange={(e) => setRow(i, { required: e.currentTarget.checked })}
              />{' '}
              Field {i + 1} required
            </label>
            <button type="button" onClick={() => setRows(rows.filter((_, j) => j !== i))}>
              Remove field {i + 1}
            </button>
          </div>
        ))}
        <button type="button" disabled={rows.length >= 20} onClick={() => setRows([...rows, NEW_FIELD])}>
          Add field
        </button>
        {rows.length > 0 && (
          <label>
            Instructions for the fields <span class="muted">(optional)</span>
            <textarea
              value={dataInstructions}
              maxLength={2000}
              onInput={(e) => setDataInstructions(e.currentTarget.value)}
            />
          </label>
        )}
      </fieldset>
      <label>
        Success rubric
        <select value={rubric} onChange={(e) => setRubric(e.currentTarget.value as '' | Rubric)}>
          <option value="">Not evaluated</option>
          <option value="pass_fail">Pass or fail</option>
          <option value="score_1_10">Score from 1 to 10</option>
          <option value="descriptive">A sentence</option>
        </select>
      </label>
      {rubric !== '' && (
        <label>
          What success means <span class="muted">(optional)</span>
          <textarea
            value={successInstructions}
            maxLength={2000}
            onInput={(e) => setSuccessInstructions(e.currentTarget.value)}
          />
        </label>
      )}
      <div class="row">
        <label class="check">
          <input type="checkbox" checked={voice} onChange={(e) => setVoice(e.currentTarget.checked)} /> Analyse voice
          calls
        </label>
        <label class="check">
          <input type="checkbox" checked={chat} onChange={(e) => setChat(e.currentTarget.checked)} /> Analyse chats
        </label>
      </div>
      <div class="row">
        <label>
          Step timeout (ms)
          <input
            type="number"
            min={100}
            max={120000}
            value={timeoutMs}
            onInput={(e) => setTimeoutMs(Number(e.currentTarget.value))}
          />
        </label>
        <label>
          A chat ends after (idle minutes)
          <input
            type="number"
            min={1}
            max={1440}
            value={idle}
            onInput={(e) => setIdle(Number(e.currentTarget.value))}
          />
        </label>
      </div>
      <ErrorBox error={save.error} title="Could not save the analysis settings" />
      <div class="actions">
        <button type="submit" class="primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save analysis settings'}
        </button>
        <span role="status" aria-live="polite">
          {saved && !save.busy ? 'Analysis settings saved.' : ''}
        </span>
      </div>
    </form>
  );
}
