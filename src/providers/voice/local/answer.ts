import { splitSentences, withoutTitleLines } from '../../chat/local.js';

/**
 * What the local voice says for a grounded turn: Parley hands over the passages of the owner's documents that
 * answer the caller's question (the same retrieval and the same refusal as chat); a hosted model would rephrase
 * them, the local voice quotes the sentences that share the most words with the question, as the local chat
 * answer does, kept short enough to listen to.
 */
const MAX_SENTENCES = 2;
const MAX_CHARS = 280;

/** Words every question and sentence has: they say nothing about which sentence answers. */
const STOPWORDS = new Set(
  'the and are but for how what when where which who why does did can could would should will you your our'
    .concat(' with from that this there their they them have has had was were been about into much many any')
    .split(' '),
);

function stemsOf(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [];
  return new Set(words.filter((w) => !STOPWORDS.has(w)).map((w) => w.replace(/s$/, '').slice(0, 5)));
}

/** Markdown and snippet marks a listener should not hear. */
export function speakable(text: string): string {
  return text
    .replace(/…/g, '\n')
    .replace(/^[ \t]*#+[ \t]*(.+?)[ \t]*$/gm, '$1.') // a heading on its own line is a sentence of its own
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[#*_`>|~]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function spokenAnswer(commentary: string, question: string): string {
  // Title lines name what follows; said, they would run into its first sentence.
  const untitled = withoutTitleLines(commentary.replace(/…/g, '\n')).join('\n');
  const sentences = [...new Set(splitSentences(speakable(untitled)))];
  if (sentences.length === 0) return '';
  const wanted = stemsOf(question);
  const scored = sentences.map((sentence, i) => {
    let hits = 0;
    for (const stem of stemsOf(sentence)) if (wanted.has(stem)) hits++;
    return { sentence, i, hits };
  });
  const best = Math.max(0, ...scored.map((s) => s.hits));
  // A second sentence only when it is nearly as close to the question as the best one (not its neighbours).
  const chosen = scored
    .filter((s) => s.hits > 0 && s.hits * 4 >= best * 3)
    .sort((a, b) => b.hits - a.hits || a.i - b.i)
    .slice(0, MAX_SENTENCES)
    .sort((a, b) => a.i - b.i)
    .map((s) => s.sentence);
  let text = (chosen.length > 0 ? chosen : sentences.slice(0, 1)).join(' ');
  if (text.length > MAX_CHARS) text = `${text.slice(0, text.lastIndexOf(' ', MAX_CHARS))}.`;
  return text;
}

/** Sentences to synthesize one after another (the first starts playing while the next is made). */
export function sentencesToSpeak(text: string): string[] {
  const out = splitSentences(speakable(text));
  return out.length > 0 ? out : speakable(text) === '' ? [] : [speakable(text)];
}
