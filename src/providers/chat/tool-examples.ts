/**
 * How the offline answer engine calls tools without a model: a tool's `examples` are phrases with slots naming its
 * parameters ("status of order {orderId}"). A question containing an example's words with a value where each slot is
 * calls the tool with those values; one containing its words but lacking a required value is answered with a question
 * for it, and the visitor's next message fills it. Values of simple types only: integer, number, string (also
 * email and date formats), enum strings and booleans.
 */
export interface ExampleTool {
  name: string;
  parameters: Record<string, unknown>;
  examples: string[];
}

export interface ExampleMatch {
  args: Record<string, unknown>;
  /** Required parameters the question gave no value for, in schema order. */
  missing: string[];
}

type Property = Record<string, unknown>;

const SLOT = /\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;
const STOP = new Set(['the', 'and', 'for', 'with', 'what', 'whats', 'is', 'are', 'of', 'my', 'a', 'an', 'to', 'me']);

/** The parameter names an example's slots name, in order. */
export function slotsOf(example: string): string[] {
  return [...example.matchAll(SLOT)].map((m) => m[1]!);
}

function propertiesOf(tool: ExampleTool): Record<string, Property> {
  return (tool.parameters['properties'] ?? {}) as Record<string, Property>;
}

function requiredOf(tool: ExampleTool): string[] {
  return (tool.parameters['required'] ?? []) as string[];
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The pattern a value of this parameter's type is found by (one capture group). */
function valuePattern(property: Property | undefined): string {
  const values = property?.['enum'];
  if (Array.isArray(values)) return `(${values.map((v) => escape(String(v))).join('|')})`;
  switch (property?.['type']) {
    case 'integer':
      return '#?([-+]?\\d+)';
    case 'number':
      return '([-+]?\\d+(?:[.,]\\d+)?)';
    case 'boolean':
      return '(yes|no|true|false)';
    default:
      if (property?.['format'] === 'email') return '([^\\s@]+@[^\\s@]+\\.[^\\s@.,;!?]+)';
      if (property?.['format'] === 'date') return '(\\d{4}-\\d{2}-\\d{2})';
      return `#?["“']?([^\\s"”'?!,;]+)`;
  }
}

/**
 * Where no example fits word for word, a value is looked for anywhere in the question: typed values by their shape, a
 * plain string only when it looks like an identifier (it holds a digit: "A-1234"), never an arbitrary word.
 */
function isPlainString(property: Property | undefined): boolean {
  return property?.['type'] === 'string' && property['enum'] === undefined && property['format'] === undefined;
}

function scanPattern(property: Property | undefined): string {
  const plain = isPlainString(property);
  return plain ? '#?([A-Za-z0-9-]*\\d[A-Za-z0-9-]*)' : valuePattern(property);
}

/** A slot's text as its parameter's type, or undefined when it is not one. */
function valueOf(text: string, property: Property | undefined): unknown {
  const raw = text.trim().replace(/^#/, '').replace(/[.]+$/, '');
  const type = property?.['type'];
  if (type === 'integer') return /^[-+]?\d+$/.test(raw) ? Number(raw) : undefined;
  if (type === 'number') return /^[-+]?\d+(?:[.,]\d+)?$/.test(raw) ? Number(raw.replace(',', '.')) : undefined;
  if (type === 'boolean') return /^(yes|true)$/i.test(raw) ? true : /^(no|false)$/i.test(raw) ? false : undefined;
  if (type !== 'string') return undefined;
  const values = property?.['enum'];
  if (Array.isArray(values)) return values.find((v) => String(v).toLowerCase() === raw.toLowerCase());
  return raw.length > 0 ? raw : undefined;
}

function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP.has(w));
}

/** The best example match of one tool for a question, or undefined when none of its examples fits. */
export function matchExamples(question: string, tool: ExampleTool): ExampleMatch | undefined {
  const properties = propertiesOf(tool);
  let best: ExampleMatch | undefined;
  for (const example of tool.examples) {
    const slots = slotsOf(example);
    const pattern = example
      .split(SLOT)
      .map((part, i) => (i % 2 === 1 ? valuePattern(properties[part]) : escape(part.trim()).replace(/\s+/g, '\\s+')))
      .filter((p) => p.length > 0)
      .join('\\s*');
    const full = new RegExp(pattern, 'iu').exec(question);
    let args: Record<string, unknown> | undefined;
    if (full) {
      args = {};
      slots.forEach((slot, i) => {
        const value = valueOf(full[i + 1] ?? '', properties[slot]);
        if (value !== undefined) args![slot] = value;
      });
    } else {
      // The example's words without its values: the tool is meant, a value is missing (asked for next).
      const wanted = wordsOf(example.replace(SLOT, ' '));
      const have = new Set(wordsOf(question));
      if (
        wanted.length === 0 ||
        !wanted.every((w) => have.has(w) || [...have].some((h) => h.startsWith(w.slice(0, 5))))
      )
        continue;
      args = {};
      for (const slot of slots) {
        const found = new RegExp(`(?:^|\\s)${scanPattern(properties[slot])}(?=$|[\\s?!.,;])`, 'iu').exec(question);
        const value = found ? valueOf(found[1]!, properties[slot]) : undefined;
        if (value !== undefined) args[slot] = value;
      }
    }
    // Other parameters of typed values (a number, an email, a date...) may be anywhere in the question.
    for (const [name, property] of Object.entries(properties)) {
      if (args[name] !== undefined || isPlainString(property)) continue;
      const found = new RegExp(`(?:^|\\s)${valuePattern(property)}(?=$|[\\s?!.,;])`, 'iu').exec(question);
      const value = found ? valueOf(found[1]!, property) : undefined;
      if (value !== undefined) args[name] = value;
    }
    const missing = requiredOf(tool).filter((name) => args![name] === undefined);
    if (!best || missing.length < best.missing.length) best = { args, missing };
    if (missing.length === 0) break;
  }
  return best;
}

/** A parameter name as words: orderId -> "order id", order_id -> "order id". */
export function spokenName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();
}

/** The question the engine asks for a missing value (recognised again on the next turn). */
export function askFor(param: string, property: Property | undefined): string {
  const description = typeof property?.['description'] === 'string' ? ` (${property['description']})` : '';
  return `To look that up I need the ${spokenName(param)}${description}. What is it?`;
}

/** A reply that is just the value asked for ("12345", "it's 12345"): the value, or undefined. */
export function valueFromReply(reply: string, param: string, tool: ExampleTool): unknown {
  const property = propertiesOf(tool)[param];
  const direct = valueOf(reply.replace(/^(it'?s|it is|the .* is)\s+/i, ''), property);
  if (direct !== undefined && !/\s/.test(String(direct))) return direct;
  const found = new RegExp(`(?:^|\\s)${scanPattern(property)}(?=$|[\\s?!.,;])`, 'iu').exec(reply);
  return found ? valueOf(found[1]!, property) : undefined;
}
