import { getAssistantById } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { toCsv } from './csv.js';
import type { presentSummary } from './owner-service.js';

type Row = ReturnType<typeof presentSummary>;

const BASE = [
  'id',
  'startedAt',
  'channel',
  'visitor',
  'visitorId',
  'assistantId',
  'messages',
  'calls',
  'durationSeconds',
  'costMicros',
  'outcome',
  'firstMessage',
  'summary',
  'success',
  'successVerdict',
  'sentiment',
];

/**
 * The structured data fields the export has a column for: every property of the schemas of the assistants whose
 * conversations it holds and any other field found in an older analysis, in alphabetical order.
 */
async function dataFields(sql: Sql, rows: Row[]): Promise<string[]> {
  const fields = new Set<string>();
  for (const id of new Set(rows.map((r) => r.assistantId))) {
    const assistant = await getAssistantById(sql, id);
    for (const name of Object.keys(assistant?.settings.analysis.structuredData?.schema.properties ?? {})) {
      fields.add(name);
    }
  }
  for (const r of rows) for (const name of Object.keys(r.analysis?.structuredData ?? {})) fields.add(name);
  // Alphabetical: settings are stored as jsonb, which keeps no property order.
  return [...fields].sort();
}

function cellOf(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/**
 * The CSV of the list: the conversation's figures, then its analysis (summary, success as pass or fail, the verdict
 * as given, sentiment) and one `data.<field>` column per structured data field.
 */
export async function conversationsCsv(sql: Sql, rows: Row[]): Promise<string> {
  const fields = await dataFields(sql, rows);
  return toCsv(
    [...BASE, ...fields.map((f) => `data.${f}`)],
    rows.map((c) => [
      c.id,
      c.startedAt,
      c.channel,
      c.visitorLabel,
      c.visitorId,
      c.assistantId,
      c.messageCount,
      c.callCount,
      c.durationSeconds,
      c.costMicros,
      c.outcome,
      c.firstMessage,
      c.analysis?.summary ?? null,
      c.analysis?.success ?? null,
      cellOf(c.analysis?.verdict),
      c.analysis?.sentiment ?? null,
      ...fields.map((f) => cellOf(c.analysis?.structuredData?.[f])),
    ]),
  );
}
