import type { AnalysisSchema, TranscriptMessage } from './types.js';

/**
 * Structured fields by pattern, offline: each field is looked for in the caller's words (then the whole
 * conversation for emails and dates) by its name and type. What is not found stays null; nothing is guessed.
 */

type Field = AnalysisSchema['properties'][string];

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;
const ISO_DATE = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b/;
const SPOKEN_DATE = new RegExp(
  '\\b(?:(?:today|tomorrow|tonight|(?:next\\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))' +
    '(?:\\s+(?:morning|afternoon|evening))?(?:\\s+(?:at|around)\\s+\\d{1,2}(?::\\d{2})?\\s*(?:am|pm)?)?' +
    '|\\d{1,2}/\\d{1,2}(?:/\\d{2,4})?' +
    '|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?' +
    '|(?:at|around)\\s+\\d{1,2}(?::\\d{2})?\\s*(?:am|pm))\\b',
  'i',
);
/** Words of a field's name that say what kind of value it is rather than what it is about. */
const KIND_WORDS = new Set([
  'number',
  'id',
  'code',
  'reference',
  'count',
  'amount',
  'total',
  'requested',
  'wanted',
  'needed',
  'is',
  'has',
  'did',
  'was',
  'flag',
  'date',
  'time',
  'at',
]);
const NEGATION = /\b(no|not|don't|do not|never|without|didn't|won't)\b[^.?!]{0,20}$/i;

/** `orderNumber`, `callback_requested` -> ['order', 'number'], ['callback', 'requested']. */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A topic word as it may be said: itself, or split in two with up to two words between ("callback": "call me back"). */
function spoken(word: string): string {
  const forms = [escape(word)];
  if (word.length >= 6) {
    for (let i = 3; i <= word.length - 3; i++) {
      forms.push(`${escape(word.slice(0, i))}(?:\\s+\\w+){0,2}\\s+${escape(word.slice(i))}`);
    }
  }
  return `(?:${forms.join('|')})`;
}

function topicPattern(name: string): string | undefined {
  const topic = wordsOf(name).filter((w) => !KIND_WORDS.has(w));
  return topic.length === 0 ? undefined : topic.map(spoken).join('\\W+(?:\\w+\\W+){0,2}?');
}

function findEnum(field: Field, text: string): unknown {
  for (const allowed of field.enum ?? []) {
    const pattern =
      typeof allowed === 'number' ? `(?<![\\d.])${escape(String(allowed))}(?![\\d])` : `\\b${escape(allowed)}\\b`;
    if (new RegExp(pattern, 'i').test(text)) return allowed;
  }
  return undefined;
}

function findBoolean(name: string, text: string): boolean | undefined {
  const topic = topicPattern(name);
  if (topic === undefined) return undefined;
  const match = new RegExp(`\\b${topic}`, 'i').exec(text);
  if (!match) return undefined;
  return !NEGATION.test(text.slice(Math.max(0, match.index - 30), match.index));
}

function findNumber(name: string, text: string, integer: boolean): number | undefined {
  const topic = topicPattern(name);
  const pattern =
    topic === undefined ? /(-?\d+(?:\.\d+)?)/ : new RegExp(`\\b${topic}\\D{0,40}?(-?\\d+(?:\\.\\d+)?)`, 'i');
  const match = pattern.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]);
  return integer ? (Number.isInteger(value) ? value : undefined) : value;
}

function findString(name: string, field: Field, caller: string, all: string): string | undefined {
  const words = wordsOf(name);
  if (field.format === 'email' || words.includes('email')) return (EMAIL.exec(caller) ?? EMAIL.exec(all))?.[0];
  if (field.format === 'date' || field.format === 'date-time')
    return (ISO_DATE.exec(caller) ?? ISO_DATE.exec(all))?.[0];
  const topic = topicPattern(name);
  if (words.some((w) => ['date', 'time', 'when', 'day'].includes(w))) {
    // Said right after what it is about ("call me back tomorrow at 3pm") first, else the first date said.
    const near = topic === undefined ? null : new RegExp(`\\b${topic}`, 'i').exec(caller);
    const after = near ? caller.slice(near.index + near[0].length, near.index + near[0].length + 80) : '';
    const dated = (text: string) => ISO_DATE.exec(text) ?? SPOKEN_DATE.exec(text);
    return (dated(after) ?? dated(caller) ?? dated(all))?.[0];
  }
  if (topic === undefined) return undefined;
  if (words.some((w) => ['number', 'id', 'code', 'reference'].includes(w))) {
    const match = new RegExp(`\\b${topic}\\W+(?:[a-z]+\\W+){0,3}?([A-Za-z0-9-]*\\d[A-Za-z0-9-]*)`, 'i').exec(caller);
    return match?.[1];
  }
  const match = new RegExp(`\\b${topic}\\s*(?:is|was|:|=)\\s*([^.,;!?\\n]{1,60})`, 'i').exec(caller);
  return match?.[1]?.trim();
}

/** Every field of the schema: a value found by pattern, or null with a note saying it was not found. */
export function extractFields(
  transcript: TranscriptMessage[],
  schema: AnalysisSchema,
): { value: Record<string, unknown>; notes: string[] } {
  const caller = transcript
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n');
  const all = transcript.map((m) => m.content).join('\n');
  const value: Record<string, unknown> = {};
  const notes: string[] = [];
  for (const [name, field] of Object.entries(schema.properties)) {
    let found: unknown;
    if (field.enum !== undefined) found = findEnum(field, caller);
    else if (field.type === 'boolean') found = findBoolean(name, caller);
    else if (field.type === 'number' || field.type === 'integer')
      found = findNumber(name, caller, field.type === 'integer');
    else found = findString(name, field, caller, all);
    value[name] = found ?? null;
    if (found === undefined) notes.push(`"${name}" was not found in the conversation`);
  }
  return { value, notes };
}
