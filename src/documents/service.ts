import type { OwnerPrincipal } from '../auth/principal.js';
import { decodeCursor, getOwnedAssistant, hasIdShape, newKnowledgeId, pageOf } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { validationError } from '../errors/index.js';
import { toStorableText, unstorableTextReason } from '../http/index.js';
import { lockAssistantTerms, removeDocumentTerms } from '../retrieval/index.js';
import type { AddressPolicy } from './address-policy.js';
import { documentErrors } from './errors.js';
import { detectContentKind, MIME_OF, UnsupportedContentError } from './extract/index.js';
import { GuardedFetchError, parseFetchableUrl } from './fetcher.js';
import type { FaqPair } from './ingestion.js';
import { boundaryOf, parseMultipart } from './multipart.js';
import * as q from './queries.js';

type Owner = Pick<OwnerPrincipal, 'accountId'>;

export interface DocumentServiceDeps {
  sql: Sql;
  /** The fetcher's address policy, used to refuse obviously private URL sources up front. */
  addressPolicy: AddressPolicy;
  /** Called after a document was queued (wakes this instance's worker). */
  onQueued?: () => void;
}

export function presentDocument(row: q.DocumentRow) {
  return {
    id: row.id,
    assistantId: row.assistantId,
    type: row.type,
    name: row.name,
    mimeType: row.mimeType,
    sourceUrl: row.sourceUrl,
    status: row.status,
    error: row.error,
    chunkCount: row.chunkCount,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

async function queue(
  deps: DocumentServiceDeps,
  doc: Parameters<typeof q.insertDocumentWithJob>[1],
): Promise<q.DocumentRow> {
  const row = await deps.sql.begin((tx) => q.insertDocumentWithJob(tx, doc));
  deps.onQueued?.();
  return row;
}

export interface UploadInput {
  rawBody: Buffer;
  contentType: string | undefined;
  filename: string | undefined;
}

/**
 * A dashboard upload: the raw body with ?filename=, or multipart with a "file" part. The type is decided
 * from the declared type, the name and the bytes; anything but text, Markdown, HTML or PDF is a 415.
 */
export async function uploadDocument(
  deps: DocumentServiceDeps,
  owner: Owner,
  assistantId: string | undefined,
  input: UploadInput,
): Promise<q.DocumentRow> {
  let bytes = input.rawBody;
  let filename = input.filename;
  let contentType = input.contentType;
  let assistantRef = assistantId;
  const boundary = boundaryOf(input.contentType);
  let file: ReturnType<typeof parseMultipart>[number] | undefined;
  if (boundary) {
    const parts = parseMultipart(input.rawBody, boundary);
    file =
      parts.find((p) => p.filename !== undefined && (p.name === 'file' || p.name === undefined)) ??
      parts.find((p) => p.filename !== undefined);
    // API callers may name the assistant as a form field (curl -F assistantId=... -F file=@...).
    const field = parts.find((p) => p.name === 'assistantId' && p.filename === undefined);
    if (assistantRef === undefined && field) assistantRef = field.data.toString('utf8').trim();
  }
  if (
    assistantRef === undefined ||
    assistantRef === '' ||
    assistantRef.length > 100 ||
    unstorableTextReason(assistantRef) !== undefined
  ) {
    throw validationError(
      [{ path: 'query.assistantId', message: 'Name the assistant: the assistantId query parameter or form field.' }],
      'upload',
    );
  }
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantRef);
  if (boundary) {
    if (!file) throw documentErrors.emptyUpload();
    bytes = file.data;
    filename = file.filename || filename;
    contentType = file.contentType;
  }
  if (bytes.length === 0) throw documentErrors.emptyUpload();
  const badName = filename === undefined ? undefined : unstorableTextReason(filename);
  if (badName) throw validationError([{ path: 'body.file.filename', message: badName }], 'upload');
  let kind;
  try {
    kind = detectContentKind({ filename, contentType, bytes });
  } catch (err) {
    if (err instanceof UnsupportedContentError) throw documentErrors.unsupportedType(err.message);
    throw err;
  }
  const name = toStorableText((filename ?? '').split(/[\\/]/).pop()?.trim().slice(0, 300) ?? '') || `Untitled ${kind}`; // a pair cut at 300 becomes U+FFFD
  return queue(deps, {
    id: newKnowledgeId('doc'),
    assistantId: assistant.id,
    accountId: assistant.accountId,
    type: 'file',
    name,
    mimeType: MIME_OF[kind],
    sourceUrl: null,
    source: Buffer.from(bytes),
  });
}

export type SourceInput =
  | { type: 'url'; url: string; name?: string | undefined }
  | { type: 'text'; name: string; text: string }
  | { type: 'faq'; name: string; pairs: FaqPair[] };

export async function addSource(
  deps: DocumentServiceDeps,
  owner: Owner,
  assistantId: string,
  input: SourceInput,
): Promise<q.DocumentRow> {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  const base = { id: newKnowledgeId('doc'), assistantId: assistant.id, accountId: assistant.accountId };
  switch (input.type) {
    case 'url': {
      let url: URL;
      try {
        url = parseFetchableUrl(input.url);
      } catch (err) {
        throw documentErrors.urlNotAllowed(err instanceof GuardedFetchError ? err.message : 'The URL is not valid.');
      }
      // Literal addresses can be judged now; host names are resolved and checked at every fetch.
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (/^[\d.]+$|:/.test(host) && !deps.addressPolicy.isAllowed(host)) {
        throw documentErrors.urlNotAllowed(
          'The URL points to a private, local or reserved network address, which is not allowed.',
        );
      }
      if (host === 'localhost' || host.endsWith('.localhost')) {
        throw documentErrors.urlNotAllowed(
          'The URL points to a private, local or reserved network address, which is not allowed.',
        );
      }
      const href = url.toString();
      return queue(deps, {
        ...base,
        type: 'url',
        name: input.name?.trim() || href,
        mimeType: null,
        sourceUrl: href,
        source: null,
      });
    }
    case 'text':
      return queue(deps, {
        ...base,
        type: 'text',
        name: input.name,
        mimeType: 'text/markdown',
        sourceUrl: null,
        source: Buffer.from(input.text, 'utf8'),
      });
    case 'faq':
      return queue(deps, {
        ...base,
        type: 'faq',
        name: input.name,
        mimeType: 'text/markdown',
        sourceUrl: null,
        source: Buffer.from(JSON.stringify(input.pairs), 'utf8'),
      });
  }
}

export async function listDocuments(
  sql: Sql,
  owner: Owner,
  filter: { assistantId?: string | undefined; limit: number; cursor?: string | undefined },
) {
  const assistant =
    filter.assistantId !== undefined ? await getOwnedAssistant(sql, owner, filter.assistantId) : undefined;
  const rows = await q.listPage(
    sql,
    { accountId: owner.accountId, assistantId: assistant?.id },
    decodeCursor(filter.cursor),
    filter.limit,
  );
  const { items, nextCursor } = pageOf(rows, filter.limit);
  return { documents: items, nextCursor };
}

export async function getDocument(sql: Sql, owner: Owner, documentId: string): Promise<q.DocumentRow> {
  const row = hasIdShape('doc', documentId) ? await q.findOwnedDocument(sql, owner.accountId, documentId) : undefined;
  if (!row) throw documentErrors.notFound();
  return row;
}

/** Deletes the document; its chunks and any queued job go with it (foreign keys cascade). */
export async function deleteDocument(sql: Sql, owner: Owner, documentId: string): Promise<void> {
  const row = await getDocument(sql, owner, documentId);
  const deleted = await sql.begin(async (tx) => {
    await lockAssistantTerms(tx, row.assistantId);
    await removeDocumentTerms(tx, row.assistantId, row.id);
    return q.deleteDocument(tx, row.id);
  });
  if (!deleted) throw documentErrors.notFound();
}

/** Runs ingestion again from the stored source (URLs are fetched again). Status goes back to pending. */
export async function reprocessDocument(
  deps: DocumentServiceDeps,
  owner: Owner,
  documentId: string,
): Promise<q.DocumentRow> {
  const row = await getDocument(deps.sql, owner, documentId);
  const updated = await deps.sql.begin((tx) => q.requeue(tx, row.id));
  if (!updated) throw documentErrors.notFound();
  deps.onQueued?.();
  return updated;
}
