/**
 * Token-overlap F1, the SQuAD measure: both texts lower-cased (NFKC), split into runs of letters and digits, the
 * articles "a", "an", "the" dropped; precision = shared tokens / answer tokens, recall = shared tokens / expected
 * tokens (shared counted as a multiset), F1 = 2PR / (P + R), rounded to 4 decimals. Kept as a reference measure: it
 * punishes a long answer that quotes the right sentence below a short wrong one, so eval cases are scored by their
 * facts instead (facts.ts, and the judge in judge.ts).
 */
const ARTICLES = new Set(['a', 'an', 'the']);

export function scoreTokens(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).filter((w) => !ARTICLES.has(w));
}

/** Token-overlap F1 of `answer` against `expected`, 0..1. Two texts without any word score 1 (both empty). */
export function tokenF1(answer: string, expected: string): number {
  const got = scoreTokens(answer);
  const want = scoreTokens(expected);
  if (got.length === 0 || want.length === 0) return got.length === want.length ? 1 : 0;
  const remaining = new Map<string, number>();
  for (const w of want) remaining.set(w, (remaining.get(w) ?? 0) + 1);
  let shared = 0;
  for (const w of got) {
    const left = remaining.get(w) ?? 0;
    if (left > 0) {
      shared++;
      remaining.set(w, left - 1);
    }
  }
  if (shared === 0) return 0;
  const precision = shared / got.length;
  const recall = shared / want.length;
  return Math.round(((2 * precision * recall) / (precision + recall)) * 10_000) / 10_000;
}
