import { z } from 'zod';
import { validationError, type ValidationIssue } from '../errors/index.js';

/**
 * Edge checks for values PostgreSQL cannot store (docs/house-rules.md rule 18): the shell runs {@link
 * assertStorableInput} over every decoded path parameter, query value and JSON body before the route's zod schema, so a
 * NUL byte, a lone surrogate or a pathologically deep document is a 400 `VALIDATION_FAILED` and never reaches a query.
 * The zod helpers below cover what a schema must say itself (int4 columns, timestamps).
 */

/** Deeper JSON than this is refused: no route's contract nests more than a few levels. */
export const MAX_INPUT_DEPTH = 32;
/** PostgreSQL `integer` bounds. */
export const PG_INT_MIN = -2147483648;
export const PG_INT_MAX = 2147483647;
/** Timestamps we accept: years 0001–9999 (ISO 8601's four-digit years; PostgreSQL stores more, JSON clients rarely do). */
const MIN_TIME = new Date('0001-01-01T00:00:00.000Z').getTime();
const MAX_TIME = new Date('9999-12-31T23:59:59.999Z').getTime();

/** Why a string cannot be stored as PostgreSQL text, or undefined when it can. */
export function unstorableTextReason(text: string): string | undefined {
  // Fast path: most strings have neither a NUL nor a surrogate code unit.
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return 'contains a NUL character (U+0000), which cannot be stored';
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++; // a well-formed pair
        continue;
      }
      return 'contains a lone UTF-16 surrogate, which is not valid Unicode text';
    }
  }
  return undefined;
}

/** Text made storable: NUL characters dropped, lone surrogates replaced with U+FFFD (for text we derive, not input we refuse). */
export function toStorableText(text: string): string {
  if (unstorableTextReason(text) === undefined) return text;
  return text
    .replace(/\u0000/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/**
 * The first value in a decoded input (object keys included) that cannot be stored, as a validation issue.
 * Iterative, so a hostile depth cannot overflow the stack.
 */
export function findUnstorable(
  value: unknown,
  prefix: string,
  maxDepth = MAX_INPUT_DEPTH,
): ValidationIssue | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: prefix, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const v = item.value;
    if (typeof v === 'string') {
      const reason = unstorableTextReason(v);
      if (reason) return { path: item.path, message: reason };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (item.depth >= maxDepth) return { path: item.path, message: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        stack.push({ value: v[i], path: `${item.path}.${i}`, depth: item.depth + 1 });
      continue;
    }
    for (const [key, child] of Object.entries(v as Record<string, unknown>)) {
      const reason = unstorableTextReason(key);
      if (reason) return { path: item.path, message: `a key ${reason}` };
      stack.push({ value: child, path: `${item.path}.${key}`, depth: item.depth + 1 });
    }
  }
  return undefined;
}

/** Throws a 400 VALIDATION_FAILED naming the first unstorable value of a decoded request part. */
export function assertStorableInput(value: unknown, where: 'params' | 'query' | 'body'): void {
  if (value === undefined) return;
  const issue = findUnstorable(value, where);
  if (issue) throw validationError([issue], where === 'params' ? 'path' : where);
}

/** True for a valid Date inside the accepted timestamp range (years 0001–9999). */
export function isStorableDate(date: Date): boolean {
  const t = date.getTime();
  return !Number.isNaN(t) && t >= MIN_TIME && t <= MAX_TIME;
}

/** A JSON integer that fits a PostgreSQL `integer` column. */
export function int32() {
  return z.number().int().min(PG_INT_MIN).max(PG_INT_MAX);
}

/** A query-string integer that fits a PostgreSQL `integer` column. */
export function queryInt32() {
  return z.coerce.number().int().min(PG_INT_MIN).max(PG_INT_MAX);
}
