/**
 * Splits Markdown-like text into retrieval chunks that keep their headings: every chunk carries the path
 * of headings it sits under ("Guide > Refunds"), stored with it and indexed with a higher weight, so a
 * passage is never separated from its title. Paragraphs are packed up to `targetChars`; one longer than
 * `maxChars` is split at sentence boundaries (then words). Fenced code blocks stay whole where possible.
 */
export interface Chunk {
  ordinal: number;
  heading: string | null;
  content: string;
}

export interface ChunkOptions {
  targetChars?: number;
  maxChars?: number;
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;
const FENCE = /^\s*(```|~~~)/;

interface Section {
  heading: string | null;
  paragraphs: string[];
}

function sectionsOf(text: string): Section[] {
  const sections: Section[] = [];
  const stack: Array<{ level: number; title: string }> = [];
  let current: Section = { heading: null, paragraphs: [] };
  let paragraph: string[] = [];
  let inFence = false;
  const flushParagraph = () => {
    const p = paragraph.join('\n').trim();
    if (p) current.paragraphs.push(p);
    paragraph = [];
  };
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (FENCE.test(line)) inFence = !inFence;
    const next = lines[i + 1];
    let heading: { level: number; title: string } | undefined;
    if (!inFence) {
      const atx = HEADING.exec(line);
      if (atx) heading = { level: atx[1]!.length, title: atx[2]!.trim() };
      else if (line.trim() && paragraph.length === 0 && next !== undefined && /^\s*(=+|-{3,})\s*$/.test(next)) {
        heading = { level: next.includes('=') ? 1 : 2, title: line.trim() };
        i++; // consume the underline
      }
    }
    if (heading) {
      flushParagraph();
      if (current.paragraphs.length > 0) sections.push(current);
      while (stack.length > 0 && stack[stack.length - 1]!.level >= heading.level) stack.pop();
      stack.push(heading);
      current = { heading: stack.map((h) => h.title).join(' > '), paragraphs: [] };
      continue;
    }
    if (!inFence && line.trim() === '') flushParagraph();
    else paragraph.push(line);
  }
  flushParagraph();
  if (current.paragraphs.length > 0) sections.push(current);
  return sections;
}

function splitLong(paragraph: string, maxChars: number): string[] {
  if (paragraph.length <= maxChars) return [paragraph];
  const sentences = paragraph.match(/[^.!?\n]+(?:[.!?]+|\n|$)\s*/g) ?? [paragraph];
  const out: string[] = [];
  let buf = '';
  for (const sentence of sentences) {
    if (sentence.length > maxChars) {
      if (buf) out.push(buf.trim());
      buf = '';
      let rest = sentence;
      while (rest.length > maxChars) {
        let cut = rest.lastIndexOf(' ', maxChars);
        if (cut < maxChars / 2) cut = maxChars;
        out.push(rest.slice(0, cut).trim());
        rest = rest.slice(cut);
      }
      buf = rest;
    } else if ((buf + sentence).length > maxChars) {
      out.push(buf.trim());
      buf = sentence;
    } else buf += sentence;
  }
  if (buf.trim()) out.push(buf.trim());
  return out;
}

export function chunkText(text: string, options: ChunkOptions = {}): Chunk[] {
  const target = options.targetChars ?? 1000;
  const max = Math.max(target, options.maxChars ?? 1600);
  const chunks: Chunk[] = [];
  for (const section of sectionsOf(text)) {
    let buf = '';
    const emit = () => {
      if (buf.trim()) chunks.push({ ordinal: chunks.length, heading: section.heading, content: buf.trim() });
      buf = '';
    };
    for (const paragraph of section.paragraphs.flatMap((p) => splitLong(p, max))) {
      if (buf && buf.length + paragraph.length + 2 > target) emit();
      buf = buf ? `${buf}\n\n${paragraph}` : paragraph;
    }
    emit();
  }
  return chunks;
}
