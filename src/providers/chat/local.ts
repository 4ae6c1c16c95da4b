import { localToolStep } from './local-tools.js';
import type { ChatCompletionRequest, ChatProvider, ChatStreamEvent, ChatTurnEvent, ContextPassage } from './types.js';

/**
 * The offline default: no model, no network. It answers with sentences quoted from the best passages,
 * chosen by overlap with the question, and says so in its first line, so nobody mistakes it for a model.
 */
export const LOCAL_LABEL = 'From the knowledge base (quoted, no AI model):';
export const LOCAL_NO_ANSWER = "I couldn't find anything about that in my knowledge base.";
export const VOICE_UNAVAILABLE_NOTE = "Voice isn't available right now, but I'm happy to keep helping here in text.";

const MAX_SENTENCES = 3;
const MAX_CHARS = 700;

/** Words nearly every question and sentence has: they say nothing about which sentence answers. */
const STOPWORDS = new Set(
  (
    'the and are but for how what when where which who whom why does did can could would should will you your our ' +
    'with from that this these those there their they them have has had was were been about into much many any ' +
    'not its per all some than then also just very too yes here please get got'
  ).split(' '),
);

/** A word's comparable stem: "shipping", "ships" and "shipped" all "ship"; at most five letters. */
export function stemOf(word: string): string {
  let w = word.toLowerCase();
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, w.endsWith('ies') ? -3 : -1);
  if (/([b-df-hj-np-tv-z])\1$/.test(w)) w = w.slice(0, -1); // "shipp" -> "ship"
  return w.slice(0, 5);
}

/** The content words of a text, as stems (stopwords and words under three characters left out, numbers kept). */
export function stemsOf(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((w) => (w.length >= 3 || /^\d/.test(w)) && !STOPWORDS.has(w)).map(stemOf));
}

/**
 * A title line of plain text: short, no sentence punctuation at its end, followed by a line that starts a sentence
 * ("Kettle price list" above "The blue kettle costs..."), or a Markdown heading. It names what follows; it is not
 * part of its first sentence.
 */
export function isTitleLine(line: string, next: string | undefined): boolean {
  const text = line.trim();
  if (/^#{1,6}\s+\S/.test(text)) return true;
  if (next === undefined || !/^\s*[\p{Lu}\p{N}]/u.test(next)) return false;
  return (
    text.length > 0 &&
    text.length <= 60 &&
    text.split(/\s+/).length <= 8 &&
    /^[\p{Lu}\p{N}]/u.test(text) &&
    !/[.!?:;,)\]"'”’…-]$/.test(text)
  );
}

/** The paragraphs of a passage with its title lines taken out (each paragraph's lines joined). */
export function withoutTitleLines(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push(paragraph.join(' '));
    paragraph = [];
  };
  lines.forEach((line, i) => {
    if (line.trim() === '') return flush();
    // Only a paragraph's first line can be a title.
    if (paragraph.length === 0 && isTitleLine(line, lines[i + 1])) return flush();
    paragraph.push(line.trim());
  });
  flush();
  return out;
}

/** Words whose trailing period does not end a sentence ("e.g. the", "Dr. Smith", "No. 5"). */
const ABBREVIATIONS = new Set([
  'e.g',
  'i.e',
  'etc',
  'vs',
  'cf',
  'approx',
  'ca',
  'incl',
  'excl',
  'no',
  'nr',
  'dr',
  'mr',
  'mrs',
  'ms',
  'prof',
  'st',
  'jr',
  'sr',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'est',
  'fig',
  'vol',
  'p',
  'pp',
  'min',
  'max',
  'mt',
  'u.s',
  'u.k',
  'a.m',
  'p.m',
  'z.b',
  'd.h',
  'bzw',
  'usw',
  'ggf',
]);

/**
 * Splits text into sentences. A sentence ends at `.`, `!` or `?` (closing quotes and brackets included) followed by
 * whitespace or the end, so "4.99", "example.com/a.b" and "v1.2" stay whole ("costs 4.99 euros" must
 * not be quoted as "costs 4."); a period after a known abbreviation or a single initial, or before a lower-case word,
 * is not an end either.
 */
export function splitSentences(text: string): string[] {
  const flat = text.replace(/\s+/g, ' ').trim();
  const out: string[] = [];
  let start = 0;
  for (const m of flat.matchAll(/[.!?]+["'”’)\]]*(?= |$)/g)) {
    const end = m.index + m[0].length;
    if (end < flat.length && !endsSentence(flat, m.index, m[0], end)) continue;
    out.push(flat.slice(start, end).trim());
    start = end;
  }
  if (start < flat.length) out.push(flat.slice(start).trim());
  return out.filter((s) => s.length > 2);
}

function endsSentence(text: string, at: number, mark: string, end: number): boolean {
  const next = text.slice(end + 1, end + 3);
  if (/^[\p{Ll}]/u.test(next)) return false; // "e.g. the", "approx. ten": the sentence goes on
  if (!mark.startsWith('.') || mark.startsWith('..')) return true;
  const word =
    /(\S+)$/
      .exec(text.slice(0, at))?.[1]
      ?.replace(/^["'“‘(\[]+/, '')
      .toLowerCase() ?? '';
  if (ABBREVIATIONS.has(word)) return false;
  if (/^\p{Lu}$/u.test(word.toUpperCase()) && word.length === 1) return false; // an initial: "J. Smith"
  return true;
}

function sentencesOf(passage: ContextPassage): string[] {
  return withoutTitleLines(passage.content).flatMap(splitSentences);
}

/** The answer text the local provider gives (exported for tests and for the contract suite). */
export function composeExtractiveAnswer(
  request: Pick<ChatCompletionRequest, 'passages' | 'question' | 'voiceUnavailable'>,
): string {
  const parts: string[] = [];
  if (request.voiceUnavailable) parts.push(VOICE_UNAVAILABLE_NOTE);
  const best = request.passages[0];
  if (!best) {
    parts.push(LOCAL_NO_ANSWER);
    return parts.join('\n\n');
  }
  const wanted = stemsOf(request.question);
  const scored = request.passages.slice(0, 2).flatMap((passage, p) =>
    sentencesOf(passage).map((sentence, i) => {
      let hits = 0;
      for (const stem of stemsOf(sentence)) if (wanted.has(stem)) hits++;
      return { sentence, p, i, score: hits - p * 0.5 };
    }),
  );
  // The sentences about as close to the question as the best one: not their neighbours, not the rest of the passage.
  const top = Math.max(0, ...scored.map((s) => s.score));
  const chosen = scored
    .filter((s) => s.score > 0 && s.score * 4 >= top * 3)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_SENTENCES)
    .sort((a, b) => a.p - b.p || a.i - b.i);
  // Passages that share no word with the question do not answer it (a shipping question is not answered with the
  // returns policy because it ranked first).
  if (chosen.length === 0) {
    parts.push(LOCAL_NO_ANSWER);
    return parts.join('\n\n');
  }
  let quote = chosen.map((s) => s.sentence).join(' ');
  if (quote.length > MAX_CHARS) quote = `${quote.slice(0, quote.lastIndexOf(' ', MAX_CHARS))} …`;
  const source = request.passages[chosen[0]!.p] ?? best;
  const where = source.heading ? `“${source.documentName}” (${source.heading})` : `“${source.documentName}”`;
  parts.push(`${LOCAL_LABEL}\n\n${quote}\n\nSource: ${where}`);
  return parts.join('\n\n');
}

export function createLocalProvider(): ChatProvider {
  async function* streamTurn(request: ChatCompletionRequest, signal: AbortSignal): AsyncGenerator<ChatTurnEvent> {
    const input = request.messages.reduce((n, m) => n + m.content.length, 0);
    const step = localToolStep(request);
    if (step.kind === 'call') {
      yield { type: 'tool_call', call: step.call };
      yield { type: 'usage', inputTokens: Math.ceil(input / 4), outputTokens: 1 };
      return;
    }
    const answer = step.kind === 'text' ? step.text : composeExtractiveAnswer(request);
    // Word-sized pieces, so streaming clients see the same shape as from a model.
    for (const piece of answer.match(/\S+\s*|\s+/g) ?? []) {
      if (signal.aborted) return;
      yield { type: 'text', text: piece };
    }
    yield { type: 'usage', inputTokens: Math.ceil(input / 4), outputTokens: Math.ceil(answer.length / 4) };
  }
  return {
    name: 'local',
    model: 'local-extractive',
    async *stream(request, signal): AsyncGenerator<ChatStreamEvent> {
      for await (const ev of streamTurn({ ...request, tools: undefined }, signal))
        if (ev.type !== 'tool_call') yield ev;
    },
    streamTurn,
  };
}
