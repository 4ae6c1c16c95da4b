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
    for (const source of sources) list.append(h('li', { title: source.snippet }, source.name));
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
