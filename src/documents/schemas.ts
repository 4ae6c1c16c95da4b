import { z } from 'zod';
import { assistantIdParam } from '../assistants/index.js';

export const documentSchema = z
  .object({
    id: z.string(),
    assistantId: z.string().describe('Internal id of the assistant.'),
    type: z.enum(['file', 'text', 'url', 'faq']),
    name: z.string(),
    mimeType: z.string().nullable(),
    sourceUrl: z.string().nullable(),
    status: z.enum(['pending', 'processing', 'ready', 'failed']),
    error: z.string().nullable().describe('Why the last attempt failed (also set while a retry is pending).'),
    chunkCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Document' });

export const single = z.object({ document: documentSchema });
const urlSource = z
  .object({
    type: z.literal('url'),
    url: z.string().trim().min(1).max(2048).describe('An http(s) address on the public internet.'),
    name: z.string().trim().min(1).max(300).optional(),
  })
  .strict();
const textSource = z
  .object({
    type: z.literal('text'),
    name: z.string().trim().min(1).max(300),
    text: z.string().min(1).max(2_000_000).describe('Plain text or Markdown.'),
  })
  .strict();
const faqSource = z
  .object({
    type: z.literal('faq'),
    name: z.string().trim().min(1).max(300),
    pairs: z
      .array(
        z
          .object({ question: z.string().trim().min(1).max(1000), answer: z.string().trim().min(1).max(20_000) })
          .strict(),
      )
      .min(1)
      .max(2000),
  })
  .strict();

/** A knowledge source given as JSON: a URL to fetch, a text, or FAQ pairs. */
export const sourceSchema = z.discriminatedUnion('type', [urlSource, textSource, faqSource]);

const assistantField = {
  assistantId: assistantIdParam.describe('The assistant that answers from it: the public asst_ id or the internal id.'),
};

/** The same sources over the v1 API, naming their assistant. */
export const v1SourceSchema = z
  .discriminatedUnion('type', [
    urlSource.extend(assistantField),
    textSource.extend(assistantField),
    faqSource.extend(assistantField),
  ])
  .meta({ id: 'DocumentSource', description: 'A URL to fetch, a text, or FAQ pairs, for one assistant.' });

/** How the v1 upload route reads in the contract: a multipart form with the file (and, optionally, the assistant). */
export const uploadFormSchema = z.object({
  file: z.string().meta({ format: 'binary' }).describe('The file: text, Markdown, HTML or PDF.'),
  assistantId: assistantIdParam
    .optional()
    .describe('The assistant, when not given as the assistantId query parameter.'),
});
