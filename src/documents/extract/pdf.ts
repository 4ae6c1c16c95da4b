import { inflateSync } from 'node:zlib';

/**
 * The seam for PDF text extraction. The built-in extractor below handles PDFs whose text is drawn with
 * simple (single-byte) fonts, the output of most word processors' "save as PDF" for Latin text. A fuller
 * extractor (a pdf.js-based package) can replace it behind this interface without touching ingestion.
 */
export interface PdfTextExtractor {
  readonly name: string;
  /** Plain text, pages separated by blank lines; '' when the PDF carries no extractable text. */
  extract(bytes: Buffer): Promise<string>;
}

/** The `stream` keyword that starts a stream's data (its dictionary precedes it, after `obj`). */
const STREAM = /\bstream\r?\n/g;
const MAX_DICT_CHARS = 4096;

function decodeStream(dict: string, raw: Buffer): Buffer | undefined {
  if (/\/Subtype\s*\/Image/.test(dict)) return undefined;
  const filter = /\/Filter\s*(\[[^\]]*\]|\/\w+)/.exec(dict)?.[1] ?? '';
  if (filter === '') return raw;
  if (/^\/FlateDecode$|^\[\s*\/FlateDecode\s*\]$/.test(filter.trim())) {
    try {
      return inflateSync(raw);
    } catch {
      try {
        return inflateSync(raw, { finishFlush: 2 }); // Z_SYNC_FLUSH: tolerate a truncated tail
      } catch {
        return undefined;
      }
    }
  }
  return undefined; // other filters (DCT, LZW, ...) carry no text we can read
}

/** Content-stream tokens we care about. */
type Token =
  | { t: 'str'; v: string }
  | { t: 'num'; v: number }
  | { t: 'op'; v: string }
  | { t: 'arr'; v: Token[] }
  | { t: 'other' };

function readLiteral(s: string, start: number): [string, number] {
  let depth = 1;
  let out = '';
  let i = start;
  while (i < s.length && depth > 0) {
    const c = s[i]!;
    if (c === '\\') {
      const n = s[i + 1] ?? '';
      const map: Record<string, string> = {
        n: '\n',
        r: '\r',
        t: '\t',
        b: '\b',
        f: '\f',
        '(': '(',
        ')': ')',
        '\\': '\\',
      };
      if (n in map) {
        out += map[n];
        i += 2;
      } else if (/[0-7]/.test(n)) {
        const m = /^[0-7]{1,3}/.exec(s.slice(i + 1, i + 4))![0];
        out += String.fromCharCode(parseInt(m, 8) & 0xff);
        i += 1 + m.length;
      } else if (n === '\r' || n === '\n') {
        i += n === '\r' && s[i + 2] === '\n' ? 3 : 2;
      } else {
        out += n;
        i += 2;
      }
      continue;
    }
    if (c === '(') depth++;
    if (c === ')') {
      depth--;
      if (depth === 0) break;
    }
    out += c;
    i++;
  }
  return [out, i + 1];
}

function decodeHex(hex: string): string {
  const clean = hex.replace(/[^0-9a-fA-F]/g, '');
  const bytes = Buffer.from(clean.length % 2 ? clean + '0' : clean, 'hex');
  // Two-byte strings with zero high bytes are almost always UTF-16BE-ish codes for Latin text.
  if (bytes.length >= 2 && bytes.length % 2 === 0 && bytes.every((b, i) => i % 2 === 1 || b === 0)) {
    let out = '';
    for (let i = 0; i < bytes.length; i += 2) out += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
    return out;
  }
  return bytes.toString('latin1');
}

function tokenize(s: string): Token[] {
  const root: Token[] = [];
  const stack: Token[][] = [root];
  let i = 0;
  const push = (tok: Token) => stack[stack.length - 1]!.push(tok);
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '%') {
      while (i < s.length && s[i] !== '\n' && s[i] !== '\r') i++;
    } else if (c === '(') {
      const [v, next] = readLiteral(s, i + 1);
      push({ t: 'str', v });
      i = next;
    } else if (c === '<' && s[i + 1] === '<') {
      i += 2; // dictionaries (inline images, marked content) carry no drawn text
      push({ t: 'other' });
    } else if (c === '>' && s[i + 1] === '>') {
      i += 2;
    } else if (c === '<') {
      const end = s.indexOf('>', i);
      push({ t: 'str', v: decodeHex(s.slice(i + 1, end < 0 ? s.length : end)) });
      i = end < 0 ? s.length : end + 1;
    } else if (c === '[') {
      const arr: Token[] = [];
      push({ t: 'arr', v: arr });
      stack.push(arr);
      i++;
    } else if (c === ']') {
      if (stack.length > 1) stack.pop();
      i++;
    } else if (/[-+.\d]/.test(c)) {
      const m = /^[-+]?(\d+\.?\d*|\.\d+)/.exec(s.slice(i, i + 32));
      if (m) {
        push({ t: 'num', v: Number(m[0]) });
        i += m[0].length;
      } else i++;
    } else if (c === '/') {
      const m = /^\/[^\s/<>[\]()%{}]*/.exec(s.slice(i))!;
      push({ t: 'other' });
      i += m[0].length;
    } else {
      const m = /^[^\s/<>[\]()%{}]+/.exec(s.slice(i));
      if (!m) {
        i++;
        continue;
      }
      if (m[0] === 'BI') {
        const end = s.indexOf('EI', i);
        i = end < 0 ? s.length : end + 2; // skip inline image data
        continue;
      }
      push({ t: 'op', v: m[0] });
      i += m[0].length;
    }
  }
  return root;
}

/** Text drawn by one content stream, lines broken where the text position moves down. */
export function textOfContentStream(content: string): string {
  const tokens = tokenize(content);
  let out = '';
  let operands: Token[] = [];
  const newline = () => {
    if (out.length > 0 && !out.endsWith('\n')) out += '\n';
  };
  for (const tok of tokens) {
    if (tok.t !== 'op') {
      operands.push(tok);
      continue;
    }
    const op = tok.v;
    if (op === 'Tj' || op === "'" || op === '"') {
      if (op !== 'Tj') newline();
      const str = operands.filter((o) => o.t === 'str').pop();
      if (str?.t === 'str') out += str.v;
    } else if (op === 'TJ') {
      const arr = operands.filter((o) => o.t === 'arr').pop();
      if (arr?.t === 'arr') {
        for (const part of arr.v) {
          if (part.t === 'str') out += part.v;
          else if (part.t === 'num' && part.v < -200 && !out.endsWith(' ')) out += ' ';
        }
      }
    } else if (op === 'Td' || op === 'TD') {
      const ty = operands.filter((o) => o.t === 'num').pop();
      if (ty?.t === 'num' && ty.v !== 0) newline();
      else if (!out.endsWith(' ') && !out.endsWith('\n') && out.length > 0) out += ' ';
    } else if (op === 'T*' || op === 'Tm' || op === 'ET') {
      newline();
    }
    operands = [];
  }
  return out;
}

/** Built-in extractor: FlateDecode content streams, Tj/TJ/'/" text operators, single-byte fonts. */
export const builtinPdfExtractor: PdfTextExtractor = {
  name: 'builtin',
  async extract(bytes: Buffer): Promise<string> {
    const text = bytes.toString('latin1');
    const pages: string[] = [];
    const streams = new RegExp(STREAM.source, 'g');
    for (let m = streams.exec(text); m; m = streams.exec(text)) {
      const start = m.index + m[0].length;
      const end = text.indexOf('endstream', start);
      if (end < 0) break;
      let rawEnd = end;
      while (rawEnd > start && (text[rawEnd - 1] === '\n' || text[rawEnd - 1] === '\r')) rawEnd--;
      const objAt = text.lastIndexOf('obj', m.index);
      const dict = text.slice(Math.max(objAt, m.index - MAX_DICT_CHARS), m.index);
      const decoded = decodeStream(dict, bytes.subarray(start, rawEnd));
      streams.lastIndex = end + 9;
      if (!decoded) continue;
      const content = decoded.toString('latin1');
      if (!/\bBT\b/.test(content) || !/T[jJ]|'|"/.test(content)) continue;
      const pageText = textOfContentStream(content).trim();
      if (pageText) pages.push(pageText);
    }
    return pages.join('\n\n');
  },
};
