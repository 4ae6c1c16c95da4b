/**
 * POST /api/v1/documents/upload as a multipart form: the one call the typed client cannot make with JSON. Works in
 * Node (18+) and browsers alike, with a File, a Blob or bytes.
 */
import type { ParleyClient } from './client.js';
import type { CallOptions, Operation, SuccessBody } from './types.js';

export type UploadedDocument = SuccessBody<Operation<'/api/v1/documents/upload', 'post'>>;

export interface UploadDocumentInput {
  /** The assistant's public asst_ id or internal id. */
  assistantId: string;
  /** The file: text, Markdown, HTML or PDF (a browser File keeps its own name). */
  file: Blob | Uint8Array | ArrayBuffer | string;
  /** The file name the dashboard shows (and whose extension helps decide the type); required for bytes and text. */
  filename?: string;
  /** The declared type, e.g. application/pdf (the server checks it against the bytes). */
  contentType?: string;
}

/** Uploads a file for an assistant to answer from. Resolves `{ document }`, `pending` until it is indexed. */
export async function uploadDocument(
  client: ParleyClient,
  input: UploadDocumentInput,
  options: CallOptions = {},
): Promise<UploadedDocument> {
  const named = typeof File !== 'undefined' && input.file instanceof File ? input.file.name : undefined;
  const filename = input.filename ?? named ?? 'upload';
  const blob =
    input.file instanceof Blob && input.contentType === undefined
      ? input.file
      : new Blob(
          [input.file as NonNullable<ConstructorParameters<typeof Blob>[0]>[number]],
          input.contentType ? { type: input.contentType } : {},
        );
  const form = new FormData();
  form.append('file', blob, filename);
  const res = await client.stream('post', '/api/v1/documents/upload', {
    params: { query: { assistantId: input.assistantId } },
    rawBody: form,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  } as never);
  return (await res.json()) as UploadedDocument;
}
