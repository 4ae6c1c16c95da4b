import { toStorableText } from '../../http/index.js';
import { htmlTitle, htmlToText } from './html.js';
import type { PdfTextExtractor } from './pdf.js';

export { builtinPdfExtractor, type PdfTextExtractor } from './pdf.js';
export { htmlToText, htmlTitle } from './html.js';

export type ContentKind = 'text' | 'markdown' | 'html' | 'pdf';

export const MIME_OF: Record<ContentKind, string> = {
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
};

const BY_EXTENSION: Record<string, ContentKind> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  mdx: 'markdown',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
};

const BY_MIME: Record<string, ContentKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
};

/** Types that say nothing: decide by extension and by the bytes. */
const GENERIC = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/x-www-form-urlencoded']);

export class UnsupportedContentError extends Error {}

function isPdf(bytes: Buffer): boolean {
  return bytes.subarray(0, 1024).toString('latin1').includes('%PDF-');
}

/** Valid UTF-8 without NUL bytes: what we accept as "text". */
function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Decides what an upload is from its declared type, its file name and its bytes, and refuses when they
 * disagree (a "PDF" that is not one, an image, a binary claiming to be text).
 */
export function detectContentKind(input: {
  filename?: string | undefined;
  contentType?: string | undefined;
  bytes: Buffer;
}): ContentKind {
  const mime = (input.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const ext = /\.([a-z0-9]+)$/i.exec(input.filename ?? '')?.[1]?.toLowerCase();
  const byExt = ext ? BY_EXTENSION[ext] : undefined;
  let kind: ContentKind | undefined;
  if (GENERIC.has(mime)) kind = byExt ?? (isPdf(input.bytes) ? 'pdf' : isText(input.bytes) ? 'text' : undefined);
  else {
    kind = BY_MIME[mime];
    // text/plain uploads of .md files are Markdown.
    if (kind === 'text' && byExt === 'markdown') kind = 'markdown';
  }
  if (!kind) throw new UnsupportedContentError('Upload plain text, Markdown, HTML or PDF.');
  if (kind === 'pdf' ? !isPdf(input.bytes) : !isText(input.bytes)) {
    throw new UnsupportedContentError(`The file content does not match its type (${MIME_OF[kind]}).`);
  }
  return kind;
}

/** Markdown-like text for the chunker. Throws when nothing readable is inside. */
export async function extractText(
  kind: ContentKind,
  bytes: Buffer,
  pdf: PdfTextExtractor,
): Promise<{ text: string; title?: string | undefined }> {
  const extracted = await extractRaw(kind, bytes, pdf);
  // PDF text and HTML entities (&#0;, &#xD800;) can decode to what PostgreSQL text cannot hold (docs/house-rules.md
  // rule 18).
  return {
    text: toStorableText(extracted.text),
    ...(extracted.title !== undefined ? { title: toStorableText(extracted.title) } : {}),
  };
}

async function extractRaw(
  kind: ContentKind,
  bytes: Buffer,
  pdf: PdfTextExtractor,
): Promise<{ text: string; title?: string | undefined }> {
  switch (kind) {
    case 'pdf':
      return { text: await pdf.extract(bytes) };
    case 'html': {
      const html = bytes.toString('utf8');
      return { text: htmlToText(html), title: htmlTitle(html) };
    }
    default:
      return {
        text: bytes
          .toString('utf8')
          .replace(/^\uFEFF/, '')
          .replace(/\r\n?/g, '\n'),
      };
  }
}
