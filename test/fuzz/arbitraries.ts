import fc from 'fast-check';
import type { z } from 'zod';

/**
 * fast-check arbitraries from the route table's zod schemas (values a schema would accept, roughly: bounds are
 * honoured where zod exposes them), and the hostile values that once broke the edge (NUL, lone surrogates, far dates,
 * huge integers).
 */

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Strings PostgreSQL, JSON or a careless handler choke on. */
export const HOSTILE_STRINGS: readonly string[] = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '\udc00\ud800',
  '',
  ' ',
  '\t\r\n',
  'x'.repeat(5000),
  '%00',
  '%',
  '%zz',
  '../../../etc/passwd',
  "' or 1=1 --",
  '"; drop table users; --',
  '<script>alert(1)</script>',
  '\r\nset-cookie: x=1',
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '0000-00-00',
  '0000-01-01',
  '9999-12-31T23:59:59.999Z',
  '+010000-01-01',
  '2024-02-30',
  '1970-01-01T00:00:00Z',
  'NaN',
  'Infinity',
  '-1',
  '1e400',
  '9'.repeat(40),
  '__proto__',
  'constructor',
  '\u202e',
  '\uffff',
  '\ufeff',
  'null',
  '[]',
  '{}',
  'asst_',
  'conv_\u0000x',
  'doc_%2e%2e',
  'vs_' + 'A'.repeat(64),
  'sk_live_' + 'A'.repeat(40),
  'acct_x',
  'https://169.254.169.254/latest/meta-data/',
  'file:///etc/passwd',
  'javascript:alert(1)',
  '\u0085',
  '\u2028',
  'e\u0301',
  '🙂'.repeat(300),
];

/** Numbers past int4, past safe integers, at float edges. */
export const HOSTILE_NUMBERS: readonly number[] = [
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  1e15 + 1,
  1e308,
  -1e308,
  -0,
  0.5,
  -0.5,
  1e-300,
  -1,
  0,
];

/** A value nested `depth` levels deep (arrays or objects). */
export function nested(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

export const hostileString = fc.constantFrom(...HOSTILE_STRINGS);
export const hostileNumber = fc.constantFrom(...HOSTILE_NUMBERS);
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { __proto__x: 1 }, ['\u0000'], {
      '\u0000': 1,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(40, 200, 3000).chain((d) => fc.constantFrom(nested(d, 'array'), nested(d, 'object'))),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const plainString = (min: number, max: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, Math.max(min, 40)) }) },
    {
      weight: 1,
      arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, Math.max(min, 20)) }),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'hello there',
        'How much does it cost?',
        'https://example.com/page',
        'visitor-fuzz-0001',
        'en',
        'de',
        'openai',
        'local',
      ),
    },
  );

/** An arbitrary of values shaped like `schema` (bounds honoured where zod exposes them). */
export function arbitraryOf(schema: z.ZodType, depth = 0): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const s = schema as unknown as Record<string, unknown>;
  if (depth > 6) return fc.constant(null);
  switch (def.type) {
    case 'object': {
      const shape = def['shape'] as Record<string, z.ZodType>;
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      const required: string[] = [];
      for (const [key, child] of Object.entries(shape)) {
        model[key] = arbitraryOf(child, depth + 1);
        const t = defOf(child).type;
        if (t !== 'optional' && t !== 'default') required.push(key);
      }
      return fc.record(model, { requiredKeys: required });
    }
    case 'string': {
      const min = typeof s['minLength'] === 'number' ? (s['minLength'] as number) : 0;
      const max = typeof s['maxLength'] === 'number' ? (s['maxLength'] as number) : 60;
      return plainString(min, max);
    }
    case 'number': {
      const lo =
        typeof s['minValue'] === 'number' && Number.isFinite(s['minValue']) ? (s['minValue'] as number) : -1000;
      const hi =
        typeof s['maxValue'] === 'number' && Number.isFinite(s['maxValue']) ? (s['maxValue'] as number) : 100_000;
      const clampLo = Math.max(lo, -1e9);
      const clampHi = Math.min(hi, 1e9);
      return s['isInt']
        ? fc.integer({ min: Math.ceil(clampLo), max: Math.floor(clampHi) })
        : fc.double({ min: clampLo, max: clampHi, noNaN: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'enum':
      return fc.constantFrom(...Object.values(def['entries'] as Record<string, string>));
    case 'literal':
      return fc.constantFrom(...(def['values'] as unknown[]));
    case 'array':
      return fc.array(arbitraryOf(def['element'] as z.ZodType, depth + 1), { maxLength: 4 });
    case 'optional':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return arbitraryOf(def['innerType'] as z.ZodType, depth);
    case 'nullable':
      return fc.option(arbitraryOf(def['innerType'] as z.ZodType, depth), { nil: null, freq: 4 });
    case 'union':
      return fc.oneof(...(def['options'] as z.ZodType[]).map((o) => arbitraryOf(o, depth + 1)));
    case 'intersection':
      return arbitraryOf(def['left'] as z.ZodType, depth);
    case 'record':
      return fc.dictionary(fc.string({ maxLength: 8 }), arbitraryOf(def['valueType'] as z.ZodType, depth + 1), {
        maxKeys: 3,
      });
    case 'pipe':
      return arbitraryOf(def['in'] as z.ZodType, depth);
    case 'lazy':
      return arbitraryOf((def['getter'] as () => z.ZodType)(), depth + 1);
    case 'null':
      return fc.constant(null);
    case 'date':
      return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Replaces one leaf (or adds one key) of a JSON value with a hostile value. */
export function corrupt(value: unknown, pick: number, hostile: unknown): unknown {
  if (value === null || typeof value !== 'object') return hostile;
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : Object.entries(value as Record<string, unknown>);
  if (entries.length === 0 || pick % 5 === 0) {
    if (Array.isArray(value)) return [...value, hostile];
    return { ...(value as Record<string, unknown>), [`extra${pick % 3}`]: hostile };
  }
  const [key, child] = entries[pick % entries.length]!;
  const replaced = pick % 2 === 0 ? hostile : corrupt(child, Math.floor(pick / 7), hostile);
  if (Array.isArray(value)) return value.map((v, i) => (String(i) === key ? replaced : v));
  return { ...(value as Record<string, unknown>), [key]: replaced };
}

/** Query values are strings on the wire: objects from the schema arbitrary flattened to name=value pairs. */
export function toQueryPairs(value: unknown): Array<[string, string]> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const pairs: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) pairs.push([k, typeof item === 'string' ? item : JSON.stringify(item)]);
    else pairs.push([k, typeof v === 'string' ? v : JSON.stringify(v)]);
  }
  return pairs;
}
