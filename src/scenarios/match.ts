/**
 * How text expectations are judged: a phrase matches case-insensitively on whole words (punctuation ignored), a
 * `/regex/flags` as written (always case-insensitive too, so "4.99 Euros" and "4.99 euros" judge alike).
 */

const REGEX = /^\/(.+)\/([a-z]*)$/s;

/** The compiled form of a `/regex/flags` pattern; undefined for a plain phrase; null when it does not compile. */
export function regexOf(pattern: string): RegExp | null | undefined {
  const m = REGEX.exec(pattern);
  if (!m) return undefined;
  try {
    const flags = new Set([...m[2]!.replace(/[gy]/g, ''), 'i']);
    return new RegExp(m[1]!, [...flags].join(''));
  } catch {
    return null;
  }
}

/** Lowercase words joined by single spaces; "4.99" stays one word. */
export function wordsOf(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}.]+/gu, ' ')
    .replace(/\.(?!\p{N})/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The part of `text` the pattern matched (for evidence), or undefined when it does not occur. */
export function findPhrase(text: string, pattern: string): string | undefined {
  const regex = regexOf(pattern);
  if (regex) return regex.exec(text)?.[0];
  if (regex === null) return undefined;
  const haystack = ` ${wordsOf(text)} `;
  const needle = wordsOf(pattern);
  if (needle === '') return undefined;
  return haystack.includes(` ${needle} `) ? needle : undefined;
}

/** Every field of `subset` equals the same field of `value` (objects compared recursively, arrays exactly). */
export function isSubset(subset: unknown, value: unknown): boolean {
  if (subset === null || typeof subset !== 'object' || Array.isArray(subset))
    return JSON.stringify(subset) === JSON.stringify(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return Object.entries(subset).every(([k, v]) => isSubset(v, record[k]));
}
