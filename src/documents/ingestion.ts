import { chunkText, type Chunk } from './chunker.js';
import {
  detectContentKind,
  extractText,
  MIME_OF,
  UnsupportedContentError,
  type PdfTextExtractor,
} from './extract/index.js';
import { GuardedFetchError, type FetchedResource } from './fetcher.js';
import type { DocumentSource } from './queries.js';

/** A processing failure with a message fit for the owner to read, and whether trying again may help. */
export class IngestionError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'IngestionError';
    this.retryable = options.retryable;
  }
}

export interface IngestionDeps {
  pdf: PdfTextExtractor;
  /** The guarded fetcher, already configured (policy, caps). */
  fetchUrl: (url: string, signal: AbortSignal) => Promise<FetchedResource>;
}

export interface IngestionResult {
  chunks: Chunk[];
  /** A better name found while processing (an HTML page's title). */
  name?: string | undefined;
  mimeType?: string | undefined;
}

/** More would not be a knowledge base but a dump; the owner should split it. */
export const MAX_CHUNKS_PER_DOCUMENT = 20_000;

export interface FaqPair {
  question: string;
  answer: string;
}

/** FAQ pairs as Markdown: each question a heading over its answer, so both land in one chunk. */
export function faqToMarkdown(pairs: FaqPair[]): string {
  return pairs.map((p) => `## ${p.question.replace(/\s+/g, ' ').trim()}\n\n${p.answer.trim()}`).join('\n\n');
}

/** Turns a stored document source into chunks. Pure apart from the URL fetch. */
export async function ingestDocument(
  deps: IngestionDeps,
  doc: DocumentSource,
  signal: AbortSignal,
): Promise<IngestionResult> {
  let text: string;
  let name: string | undefined;
  let mimeType: string | undefined;
  try {
    switch (doc.type) {
      case 'text':
        text = (doc.source ?? Buffer.alloc(0)).toString('utf8');
        break;
      case 'faq':
        text = faqToMarkdown(JSON.parse((doc.source ?? Buffer.from('[]')).toString('utf8')) as FaqPair[]);
        break;
      case 'file': {
        const bytes = doc.source ?? Buffer.alloc(0);
        const kind = detectContentKind({ filename: doc.name, contentType: doc.mimeType ?? undefined, bytes });
        text = (await extractText(kind, bytes, deps.pdf)).text;
        break;
      }
      case 'url': {
        const fetched = await deps.fetchUrl(doc.sourceUrl ?? '', signal);
        const path = new URL(fetched.url).pathname;
        const kind = detectContentKind({ filename: path, contentType: fetched.contentType, bytes: fetched.body });
        const extracted = await extractText(kind, fetched.body, deps.pdf);
        text = extracted.text;
        mimeType = MIME_OF[kind];
        if (extracted.title && doc.name === doc.sourceUrl) name = extracted.title.slice(0, 300);
        break;
      }
    }
  } catch (err) {
    if (err instanceof GuardedFetchError)
      throw new IngestionError(err.message, { retryable: err.retryable, cause: err });
    if (err instanceof UnsupportedContentError) throw new IngestionError(err.message, { retryable: false, cause: err });
    if (signal.aborted) throw err;
    throw new IngestionError('The document could not be read.', { retryable: false, cause: err });
  }
  const chunks = chunkText(text);
  if (chunks.length === 0) {
    throw new IngestionError(
      doc.mimeType === 'application/pdf'
        ? 'No text could be extracted from this PDF (scanned pages or unsupported fonts).'
        : 'The document contains no readable text.',
      { retryable: false },
    );
  }
  if (chunks.length > MAX_CHUNKS_PER_DOCUMENT) {
    throw new IngestionError(
      `The document is too large (more than ${MAX_CHUNKS_PER_DOCUMENT} passages); split it into smaller documents.`,
      { retryable: false },
    );
  }
  return { chunks, name, mimeType };
}
