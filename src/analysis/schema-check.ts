import type { AnalysisSchema } from './types.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A value for a note: short, so a long wrong answer does not flood the report. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Why `value` does not fit `field`, or undefined when it does. */
function mismatch(field: AnalysisSchema['properties'][string], value: unknown): string | undefined {
  if (field.enum !== undefined && !field.enum.some((allowed) => allowed === value)) {
    return `expected one of ${field.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') return 'expected a string';
      if (field.format === 'email' && !EMAIL.test(value)) return 'expected an email address';
      if (field.format === 'date' && (!DATE.test(value) || Number.isNaN(Date.parse(value))))
        return 'expected a date (YYYY-MM-DD)';
      if (field.format === 'date-time' && Number.isNaN(Date.parse(value))) return 'expected a date and time';
      return undefined;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'expected a number';
    case 'integer':
      return Number.isInteger(value) ? undefined : 'expected an integer';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'expected true or false';
    default:
      return undefined;
  }
}

/**
 * Keeps the values that validate against the schema: every property of the schema is answered (null when absent
 * or dropped); a value that does not validate is dropped with a note, as is a name the schema does not define, and
 * a required property left empty is noted.
 */
export function checkStructuredData(
  schema: AnalysisSchema,
  raw: unknown,
): { value: Record<string, unknown>; notes: string[] } {
  const notes: string[] = [];
  const value: Record<string, unknown> = Object.fromEntries(Object.keys(schema.properties).map((k) => [k, null]));
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    notes.push('the answer was not a JSON object; no field was kept');
    return { value, notes };
  }
  for (const [name, candidate] of Object.entries(raw as Record<string, unknown>)) {
    const field = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (field === undefined) {
      notes.push(`"${name}" is not in the schema; dropped`);
      continue;
    }
    if (candidate === null || candidate === undefined) continue;
    const why = mismatch(field, candidate);
    if (why !== undefined) notes.push(`"${name}": ${why}, got ${shown(candidate)}; dropped`);
    else value[name] = candidate;
  }
  for (const name of schema.required ?? []) {
    if (value[name] === null) notes.push(`"${name}" is required but was not found`);
  }
  return { value, notes };
}
