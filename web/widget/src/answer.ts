import { h } from './dom.js';

export interface AnswerSource {
  documentId: string;
  name: string;
  snippet: string;
  score: number;
}

/**
 * Under a complete answer: its sources (document names; the snippet as a tooltip) and two feedback toggles,
 * "Helpful" / "Not helpful" (a new rating replaces the previous one, as POST /api/v1/feedback does).
 */
export function decorateAnswer(
  bubble: HTMLElement,
  sources: AnswerSource[],
  rate: (rating: 'positive' | 'negative') => void,
): void {
  if (sources.length > 0) {
    const list = h('ul', {});
    // Each document once, however many of its passages the answer used.
    const seen = new Set<string>();
    for (const source of sources) {
      if (seen.has(source.documentId)) continue;
      seen.add(source.documentId);
      list.append(h('li', { title: source.snippet }, source.name));
    }
    bubble.append(h('div', { class: 'sources' }, 'Sources', list));
  }
  const up = h('button', { type: 'button', class: 'ghost', 'aria-pressed': 'false' }, 'Helpful');
  const down = h('button', { type: 'button', class: 'ghost', 'aria-pressed': 'false' }, 'Not helpful');
  const choose = (rating: 'positive' | 'negative') => {
    up.setAttribute('aria-pressed', String(rating === 'positive'));
    down.setAttribute('aria-pressed', String(rating === 'negative'));
    rate(rating);
  };
  up.addEventListener('click', () => choose('positive'));
  down.addEventListener('click', () => choose('negative'));
  bubble.append(h('div', { class: 'rate', role: 'group', 'aria-label': 'Rate this answer' }, up, down));
}

/** The server's offline answers open with a line saying how they were made; visitors need the answer, not that. */
const PREAMBLE = /^[^\n]*\(quoted, no AI model\):[ \t]*\n*/;
const PREAMBLE_TEXT = 'From the knowledge base (quoted, no AI model):';
/** A closing "Source: …" line: the source list under the answer says it. While tokens stream, its start too. */
const SOURCE_LINE = /\n\s*Source:[^\n]*$/;
const SOURCE_LINE_ARRIVING = /\n\s*S(o(u(r(c(e(:[^\n]*)?)?)?)?)?)?\s*$/;

/**
 * The answer as a visitor reads it: without the internal preamble, and without a source line that the list of
 * sources under it repeats. While tokens arrive (`final` false), a half-arrived preamble or source line shows nothing.
 */
export function visitorText(text: string, final = false): string {
  if (!final && text.length > 0 && PREAMBLE_TEXT.startsWith(text)) return '';
  return text.replace(PREAMBLE, '').replace(final ? SOURCE_LINE : SOURCE_LINE_ARRIVING, '');
}
