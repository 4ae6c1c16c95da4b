/**
 * The facts-based score of an eval answer (`factScore`): what a reader checks when comparing an answer with the
 * expected one. The expected answer's facts are its numbers (weight 3), its names (capitalised words inside a
 * sentence, weight 2) and its other key words (weight 1; words the question already says are left out, since
 * repeating the question proves nothing). The score is the weighted share of those facts found in the answer, so a
 * long answer that quotes the right sentence is not punished for its length. A contradiction multiplies it by
 * `CONTRADICTION_FACTOR`: a number where the expected has a different one (and the expected one is missing), or, in
 * the answer's sentence that best matches the expected answer, another name where the expected one is missing, or a
 * negation of what the expected says (or the reverse). Deterministic; no model called.
 */
const STOPWORDS = new Set(
  (
    'a an the is are was were be been being am to of in on at for and or but if it its this that these those with by ' +
    'from as into about than then so such there here what which who whom whose when where why how do does did done ' +
    'has have had having can could will would shall should may might must i you he she we they me him her us them my ' +
    'your his our their yes please also just only very all any each some more most per up out over under again'
  ).split(' '),
);
const NEGATIONS = new Set(['no', 'not', 'never', 'none', 'nothing', 'cannot', 'without', 'neither', 'nor']);
const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  hundred: 100,
};
/** How much of its score an answer that contradicts the expected one keeps. */
export const CONTRADICTION_FACTOR = 0.2;
const WEIGHT = { number: 3, name: 2, word: 1 } as const;

interface Token {
  /** Lower-cased stem, or the number's canonical form. */
  key: string;
  kind: 'number' | 'name' | 'word' | 'negation';
}

function canonicalNumber(raw: string): string {
  // "1,000" is a thousand; "4,99" a decimal comma.
  const n = /^\d{1,3}(,\d{3})+$/.test(raw) ? raw.replace(/,/g, '') : raw.replace(',', '.');
  return String(Number.parseFloat(n));
}

function stem(word: string): string {
  let w = word.replace(/['’]s$/, '').replace(/['’]/g, '');
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 4 && w.endsWith('es')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  return w;
}

/** The sentences of a text (split after . ! ? or a line break, a decimal point kept). */
export function sentencesOf(text: string): string[] {
  return text
    .normalize('NFKC')
    .split(/(?<=[.!?])\s+(?=\S)|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function tokensOf(sentence: string): Token[] {
  const out: Token[] = [];
  const raw = sentence.match(/\d+(?:[.,]\d+)*|[\p{L}]+(?:['’][\p{L}]+)?/gu) ?? [];
  raw.forEach((word, i) => {
    const lower = word.toLowerCase();
    if (/^\d/.test(word)) out.push({ key: canonicalNumber(word), kind: 'number' });
    else if (NUMBER_WORDS[lower] !== undefined) out.push({ key: String(NUMBER_WORDS[lower]), kind: 'number' });
    else if (NEGATIONS.has(lower) || /n['’]t$/.test(lower)) out.push({ key: 'not', kind: 'negation' });
    else if (STOPWORDS.has(lower)) return;
    else out.push({ key: stem(lower), kind: i > 0 && /^\p{Lu}/u.test(word) ? 'name' : 'word' });
  });
  return out;
}

function allTokens(text: string): Token[] {
  return sentencesOf(text).flatMap(tokensOf);
}

/** 0..1: the weighted share of the expected answer's facts found in the answer, lowered by a contradiction. */
export function factScore(answer: string, expected: string, question = ''): number {
  const want = allTokens(expected).filter((t) => t.kind !== 'negation');
  const asked = new Set(allTokens(question).map((t) => t.key));
  const facts = new Map<string, number>();
  for (const t of want) facts.set(t.key, Math.max(facts.get(t.key) ?? 0, WEIGHT[t.kind as keyof typeof WEIGHT]));
  // Words the question already says prove nothing, unless they are all there is.
  const fresh = [...facts].filter(([key]) => !asked.has(key));
  const counted = fresh.length > 0 ? fresh : [...facts];
  if (counted.length === 0) return answer.trim() === '' ? 0 : 1;

  const got = allTokens(answer);
  const present = new Set(got.map((t) => t.key));
  const total = counted.reduce((n, [, w]) => n + w, 0);
  const found = counted.reduce((n, [key, w]) => n + (present.has(key) ? w : 0), 0);
  let score = found / total;
  if (
    contradicts(
      answer,
      expected,
      got,
      want,
      counted.map(([key]) => key),
    )
  )
    score *= CONTRADICTION_FACTOR;
  return Math.round(score * 10_000) / 10_000;
}

const present = (tokens: Token[], key: string): boolean => tokens.some((t) => t.key === key);

function contradicts(answer: string, expected: string, got: Token[], want: Token[], keys: string[]): boolean {
  const expectedNumbers = new Set(want.filter((t) => t.kind === 'number').map((t) => t.key));
  const answerNumbers = new Set(got.filter((t) => t.kind === 'number').map((t) => t.key));
  const missing = [...expectedNumbers].some((n) => !answerNumbers.has(n));
  const alien = [...answerNumbers].some((n) => !expectedNumbers.has(n));
  if (expectedNumbers.size > 0 && missing && alien) return true;
  // Negation: judged on the answer's sentence that shares the most key words with the expected answer.
  const wanted = new Set(keys);
  let best: Token[] = [];
  let bestShared = 0;
  for (const sentence of sentencesOf(answer)) {
    const tokens = tokensOf(sentence);
    const shared = tokens.filter((t) => wanted.has(t.key)).length;
    if (shared > bestShared) [best, bestShared] = [tokens, shared];
  }
  if (bestShared === 0) return false;
  // Another name where the expected has one (another city, another person), said in that sentence.
  const expectedNames = new Set(want.filter((t) => t.kind === 'name').map((t) => t.key));
  const answerNames = best.filter((t) => t.kind === 'name').map((t) => t.key);
  if (
    [...expectedNames].some((n) => !present(got, n)) &&
    answerNames.some((n) => !expectedNames.has(n) && !wanted.has(n))
  )
    return true;
  const expectedNegated = allTokens(expected).some((t) => t.kind === 'negation');
  return expectedNegated !== best.some((t) => t.kind === 'negation');
}
