/**
 * A small bigram language model (ARPA text, which pocketsphinx loads with `-lm`) built from what the caller is likely
 * to talk about: the assistant's documents plus everyday question phrasing. A recognizer limited to a few hundred
 * likely words hears synthetic and accented speech far better than one choosing among the 130 000 words of a
 * general model (docs/local-voice.md has the measured difference). Words the pronunciation dictionary lacks are
 * dropped, since the recognizer could not say them anyway.
 */

/** Everyday question phrasing, so questions are heard even when the documents never ask one. */
export const QUESTION_PHRASES = [
  'how much does it cost',
  'how much is it',
  'what does it cost',
  'what is the price',
  'what are your opening hours',
  'when are you open',
  'when do you open',
  'when do you close',
  'where are you',
  'where is it',
  'what is it',
  'what is the',
  'what are the',
  'who is',
  'how do i',
  'how can i',
  'can i',
  'can you tell me',
  'do you have',
  'do you offer',
  'is there',
  'are there',
  'tell me about',
  'i would like to know',
  'i want to know',
  'please tell me',
  'how long does it take',
  'how many',
  'which one',
  'why',
  'yes',
  'no',
  'thank you',
  'hello',
  'goodbye',
  'per month',
  'per year',
  'my',
  'i',
  'we',
  'our',
  'your',
  'me',
  'it',
  'is',
  'a',
];

const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** 0..999 999 in words ("4" four, "99" ninety nine, "2024" two thousand twenty four). */
export function numberWords(n: number): string {
  if (n < 20) return ONES[n]!;
  if (n < 100) return n % 10 === 0 ? TENS[Math.floor(n / 10)]! : `${TENS[Math.floor(n / 10)]} ${ONES[n % 10]}`;
  if (n < 1000) {
    const rest = n % 100;
    return `${ONES[Math.floor(n / 100)]} hundred${rest === 0 ? '' : ` ${numberWords(rest)}`}`;
  }
  const rest = n % 1000;
  return `${numberWords(Math.floor(n / 1000))} thousand${rest === 0 ? '' : ` ${numberWords(rest)}`}`;
}

/** Text as the words a speaker says: lower case, numbers spelt out ("4.99" four point nine nine, "9:30" nine thirty). */
export function spokenWords(text: string): string[] {
  const spelt = text
    .toLowerCase()
    .replace(/[€$£]/g, ' ')
    .replace(/(\d),(\d{3})\b/g, '$1$2')
    .replace(/(\d+):(\d{2})\b/g, (_, a: string, b: string) => ` ${a} ${b} `)
    .replace(/(\d+)\.(\d+)/g, (_, a: string, b: string) => ` ${a} point ${b.split('').join(' ')} `)
    .replace(/\d{1,6}/g, (d) => ` ${numberWords(Number(d))} `)
    .replace(/%/g, ' percent ');
  return spelt.match(/[a-z]+(?:'[a-z]+)?/g) ?? [];
}

/** Sentences of words, each as the recognizer could hear it (unknown words split the sentence). */
export function corpusSentences(text: string, known: (word: string) => boolean): string[][] {
  const out: string[][] = [];
  for (const part of text.split(/[.!?;:\n]+/)) {
    let run: string[] = [];
    for (const word of spokenWords(part)) {
      if (known(word)) run.push(word);
      else if (run.length > 0) {
        out.push(run);
        run = [];
      }
    }
    if (run.length > 0) out.push(run);
  }
  return out;
}

const DISCOUNT = 0.5;
const log10 = (p: number): string => Math.log10(p).toFixed(4);

/** An ARPA bigram model (absolute discounting, backed off to smoothed unigrams) of the sentences. */
export function arpaBigram(sentences: string[][]): string {
  const uni = new Map<string, number>();
  const bi = new Map<string, Map<string, number>>();
  let total = 0;
  for (const words of sentences) {
    const seq = ['<s>', ...words, '</s>'];
    for (let i = 0; i < seq.length; i++) {
      const w = seq[i]!;
      if (w !== '<s>') {
        uni.set(w, (uni.get(w) ?? 0) + 1);
        total++;
      }
      if (i === 0) continue;
      const h = seq[i - 1]!;
      const next = bi.get(h) ?? new Map<string, number>();
      next.set(w, (next.get(w) ?? 0) + 1);
      bi.set(h, next);
    }
  }
  const vocab = [...uni.keys()];
  const p1 = (w: string): number => ((uni.get(w) ?? 0) + 0.5) / (total + 0.5 * vocab.length);
  const lines1: string[] = [`-99.0000 <s> ${log10(DISCOUNT)}`];
  const lines2: string[] = [];
  for (const [h, next] of bi) {
    let count = 0;
    for (const c of next.values()) count += c;
    const backoff = (DISCOUNT * next.size) / count;
    for (const [w, c] of next) lines2.push(`${log10((c - DISCOUNT) / count + backoff * p1(w))} ${h} ${w}`);
    if (h !== '<s>') lines1.push(`${log10(p1(h))} ${h} ${log10(backoff)}`);
    else lines1[0] = `-99.0000 <s> ${log10(backoff)}`;
  }
  for (const w of vocab) if (!bi.has(w)) lines1.push(`${log10(p1(w))} ${w}${w === '</s>' ? '' : ' 0.0000'}`);
  return [
    '\\data\\',
    `ngram 1=${lines1.length}`,
    `ngram 2=${lines2.length}`,
    '',
    '\\1-grams:',
    ...lines1,
    '',
    '\\2-grams:',
    ...lines2,
    '',
    '\\end\\',
    '',
  ].join('\n');
}

/** The model for a session: its hint text (the documents, bounded) plus the question phrases. */
export function sessionLanguageModel(hint: string, known: (word: string) => boolean): string {
  const sentences = corpusSentences(hint, known);
  for (const phrase of QUESTION_PHRASES) sentences.push(phrase.split(' ').filter(known));
  return arpaBigram(sentences.filter((s) => s.length > 0));
}

/** Words the recognizer hears for a digit said in a row of digits ("one two" sounds as "want to"). */
const HOMOPHONES = new Map([
  ['want', 'one'],
  ['won', 'one'],
  ['to', 'two'],
  ['too', 'two'],
  ['for', 'four'],
  ['ate', 'eight'],
]);

/**
 * Homophones read as digits only inside a row of digits: a run of digit words and homophones of at least three words,
 * two of them real digits ("want to three four five" 1 2 3 4 5); "a table for two" and "i want to know" stay words.
 */
function digitHomophones(words: string[]): string[] {
  const out = [...words];
  const digitish = (w: string) => HOMOPHONES.has(w.toLowerCase()) || NUMBER_WORDS.get(w.toLowerCase())?.kind === 'unit';
  for (let i = 0; i < words.length;) {
    if (!digitish(words[i]!)) {
      i++;
      continue;
    }
    let end = i;
    while (end < words.length && digitish(words[end]!)) end++;
    const real = words.slice(i, end).filter((w) => !HOMOPHONES.has(w.toLowerCase())).length;
    if (end - i >= 3 && real >= 2)
      for (let k = i; k < end; k++) out[k] = HOMOPHONES.get(words[k]!.toLowerCase()) ?? words[k]!;
    i = end;
  }
  return out;
}

type NumberKind = 'unit' | 'teen' | 'tens' | 'hundred' | 'thousand';
const NUMBER_WORDS = new Map<string, { kind: NumberKind; value: number }>([
  ...ONES.map((w, i) => [w, { kind: i < 10 ? 'unit' : 'teen', value: i }] as const),
  ...TENS.flatMap((w, i) => (w === '' ? [] : [[w, { kind: 'tens', value: i * 10 }] as const])),
  ['hundred', { kind: 'hundred', value: 100 }],
  ['thousand', { kind: 'thousand', value: 1000 }],
]);

/**
 * The inverse of {@link spokenWords} for what a caller says of a number: the recognizer hears words ("one two three
 * four five", "twelve thousand three hundred and forty five", "twelve thirty four"), a tool's argument wants digits.
 * Numbers said one after another are one value, digit after digit ("one two three" 123), as callers read out an
 * order or a booking number.
 */
export function withDigits(text: string): string {
  const words = digitHomophones(text.split(/\s+/).filter((w) => w !== ''));
  const out: string[] = [];
  let digits = '';
  let thousands = 0;
  let current = 0;
  let last: NumberKind | 'and' | undefined;
  const closeGroup = () => {
    if (last !== undefined) digits += String(thousands + current);
    thousands = current = 0;
    last = undefined;
  };
  const closeRun = () => {
    closeGroup();
    if (digits !== '') out.push(digits);
    digits = '';
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!.toLowerCase();
    const number = NUMBER_WORDS.get(word);
    if (number === undefined) {
      // "and" inside a number ("three hundred and forty five") belongs to it.
      if (word === 'and' && (last === 'hundred' || last === 'thousand') && NUMBER_WORDS.has(words[i + 1] ?? '')) {
        last = 'and';
        continue;
      }
      closeRun();
      out.push(words[i]!);
      continue;
    }
    const after = last === 'hundred' || last === 'thousand' || last === 'and';
    const joins =
      number.kind === 'unit'
        ? after || (last === 'tens' && current % 10 === 0)
        : number.kind === 'teen' || number.kind === 'tens'
          ? after
          : number.kind === 'hundred'
            ? (last === 'unit' || last === 'teen') && current < 100
            : last !== undefined && last !== 'and' && thousands === 0;
    if (!joins) {
      closeGroup();
      // A multiplier that starts nothing ("a hundred") is left as a word.
      if (number.kind === 'hundred' || number.kind === 'thousand') {
        closeRun();
        out.push(words[i]!);
        continue;
      }
    }
    if (number.kind === 'hundred') current *= 100;
    else if (number.kind === 'thousand') {
      thousands = current * 1000;
      current = 0;
    } else current += number.value;
    last = number.kind;
  }
  closeRun();
  return out.join(' ');
}
