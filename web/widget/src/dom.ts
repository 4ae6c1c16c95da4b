/**
 * A tiny DOM builder: elements, attributes and text only. Never innerHTML (assistant and visitor text are always
 * text nodes) and never style attributes (a strict CSP without 'unsafe-inline' in style-src must keep working).
 */
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

/** A decorative 24x24 icon from one path (hidden from assistive technology: its button carries the name). */
export function icon(path: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const p = document.createElementNS(SVG, 'path');
  p.setAttribute('d', path);
  svg.append(p);
  return svg;
}

export const ICONS = {
  chat: 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z',
  close: 'M6.4 5 5 6.4 10.6 12 5 17.6 6.4 19l5.6-5.6 5.6 5.6 1.4-1.4-5.6-5.6L19 6.4 17.6 5 12 10.6z',
};

/** Appends a piece of a streamed transcript: words without their own leading space get one. */
export function joinText(text: string, delta: string): string {
  if (text === '' || /^[\s.,!?;:)]/.test(delta) || /\s$/.test(text)) return text + delta;
  return `${text} ${delta}`;
}
