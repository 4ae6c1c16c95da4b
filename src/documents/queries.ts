import type { Sql, TransactionSql } from '../db/index.js';
import type { PageCursor } from '../assistants/index.js';

type Db = Sql | TransactionSql;

export type DocumentType = 'file' | 'text' | 'url' | 'faq';
export type DocumentStatus = 'pending' | 'processing' | 'ready' | 'failed';

export interface DocumentRow {
  id: string;
  assistantId: string;
  accountId: string;
  type: DocumentType;
  name: string;
  mimeType: string | null;
  sourceUrl: string | null;
  status: DocumentStatus;
  error: string | null;
  chunkCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/** Never selects `source` (the stored bytes) in listings. */
const COLUMNS =
  'id, assistant_id, account_id, type, name, mime_type, source_url, status, error, chunk_count, created_at, updated_at';

export async function insertDocumentWithJob(
  sql: Db,
  doc: {
    id: string;
    assistantId: string;
    accountId: string;
    type: DocumentType;
    name: string;
    mimeType: string | null;
    sourceUrl: string | null;
    source: Buffer | null;
  },
): Promise<DocumentRow> {
  const [row] = await sql<DocumentRow[]>`
    insert into documents (id, assistant_id, account_id, type, name, mime_type, source_url, source, status)
    values (${doc.id}, ${doc.assistantId}, ${doc.accountId}, ${doc.type}, ${doc.name}, ${doc.mimeType}, ${doc.sourceUrl}, ${doc.source}, 'pending')
    returning ${sql.unsafe(COLUMNS)}`;
  await sql`insert into ingestion_jobs (document_id) values (${doc.id})`;
  return row!;
}

export async function findOwnedDocument(sql: Db, accountId: string, id: string): Promise<DocumentRow | undefined> {
  const [row] = await sql<
    DocumentRow[]
  >`select ${sql.unsafe(COLUMNS)} from documents where id = ${id} and account_id = ${accountId}`;
  return row;
}

export async function listPage(
  sql: Db,
  filter: { accountId: string; assistantId?: string | undefined },
  after: PageCursor | undefined,
  limit: number,
): Promise<DocumentRow[]> {
  return sql<DocumentRow[]>`
    select ${sql.unsafe(COLUMNS)} from documents
    where account_id = ${filter.accountId}
      ${filter.assistantId !== undefined ? sql`and assistant_id = ${filter.assistantId}` : sql``}
      ${after ? sql`and (created_at, id) < (${after.createdAt}, ${after.id})` : sql``}
    order by created_at desc, id desc limit ${limit + 1}`;
}

export async function deleteDocument(sql: Db, id: string): Promise<boolean> {
  return (await sql`delete from documents where id = ${id} returning id`).length > 0;
}

/** Back to pending with a fresh job; a worker still holding the old lease loses it (new token on claim). */
export async function requeue(sql: Db, id: string): Promise<DocumentRow | undefined> {
  const [row] = await sql<DocumentRow[]>`
    update documents set status = 'pending', error = null where id = ${id} returning ${sql.unsafe(COLUMNS)}`;
  if (!row) return undefined;
  await sql`
    insert into ingestion_jobs (document_id) values (${id})
    on conflict (document_id) do update
      set attempts = 0, run_at = now(), locked_until = null, lease_token = null, last_error = null`;
  return row;
}

// ---- the ingestion queue ------------------------------------------------------------------------------

export interface ClaimedJob {
  id: number;
  documentId: string;
  attempts: number;
  maxAttempts: number;
  leaseToken: string;
}

/**
 * Claims the next due job: not running, or whose lease expired (its worker died). SKIP LOCKED lets many
 * workers poll one table without waiting on each other; attempts count claims, so a job that keeps
 * killing its worker still ends.
 */
export async function claimJob(sql: Db, leaseToken: string, leaseMs: number): Promise<ClaimedJob | undefined> {
  const [job] = await sql<ClaimedJob[]>`
    update ingestion_jobs set attempts = attempts + 1, lease_token = ${leaseToken},
      locked_until = now() + make_interval(secs => ${leaseMs / 1000})
    where id = (
      select id from ingestion_jobs
      where run_at <= now() and (locked_until is null or locked_until < now())
      order by run_at, id
      limit 1
      for update skip locked)
    returning id, document_id, attempts, max_attempts, lease_token`;
  return job;
}

/** Extends a lease while a long job runs; false when the lease was lost (reprocess, delete, expiry). */
export async function renewLease(sql: Db, jobId: number, leaseToken: string, leaseMs: number): Promise<boolean> {
  const rows = await sql`
    update ingestion_jobs set locked_until = now() + make_interval(secs => ${leaseMs / 1000})
    where id = ${jobId} and lease_token = ${leaseToken} returning id`;
  return rows.length > 0;
}

/**
 * The lock order of every transaction that writes a document (one order, so they wait instead of deadlocking: a
 * reprocess holding the document row and waiting for the job row deadlocked with the worker holding the job row and
 * waiting for the document row):
 *   1. the assistant row (KEY SHARE, {@link lockAssistantForWrite}; a deleted assistant cascades to its documents),
 *   2. the assistant's terms (advisory, lockAssistantTerms), when lexeme counts change,
 *   3. the document row ({@link lockDocument}; requeue and delete take it by their UPDATE / DELETE),
 *   4. the job row (holdsLease, requeue's upsert, delete's cascade),
 * then chunks and lexemes. Take only a suffix or a subsequence of it, never out of order.
 */
export async function lockAssistantForWrite(sql: Db, assistantId: string): Promise<boolean> {
  return (await sql`select 1 from assistants where id = ${assistantId} for key share`).length > 0;
}

/** Step 3 of the lock order: false when the document is gone. */
export async function lockDocument(sql: Db, documentId: string): Promise<boolean> {
  return (await sql`select 1 from documents where id = ${documentId} for no key update`).length > 0;
}

/** Step 4 of the lock order: true while `leaseToken` still holds the job (a reprocess or a newer claim fences it). */
export async function holdsLease(sql: Db, jobId: number, leaseToken: string): Promise<boolean> {
  const rows = await sql`select 1 from ingestion_jobs where id = ${jobId} and lease_token = ${leaseToken} for update`;
  return rows.length > 0;
}

export async function markProcessing(sql: Db, documentId: string): Promise<void> {
  await sql`update documents set status = 'processing' where id = ${documentId}`;
}

export interface DocumentSource extends Pick<
  DocumentRow,
  'id' | 'assistantId' | 'accountId' | 'type' | 'name' | 'mimeType' | 'sourceUrl'
> {
  source: Buffer | null;
  language: string;
}

export async function loadSource(sql: Db, documentId: string): Promise<DocumentSource | undefined> {
  const [row] = await sql<DocumentSource[]>`
    select d.id, d.assistant_id, d.account_id, d.type, d.name, d.mime_type, d.source_url, d.source, a.language
    from documents d join assistants a on a.id = d.assistant_id where d.id = ${documentId}`;
  return row;
}

/** Replaces the document's chunks (search vectors in the assistant's language) and marks it ready. */
export async function replaceChunks(
  sql: Db,
  doc: { id: string; assistantId: string; language: string; name?: string | undefined; mimeType?: string | undefined },
  chunks: Array<{ ordinal: number; heading: string | null; content: string }>,
): Promise<void> {
  await sql`delete from document_chunks where document_id = ${doc.id}`;
  const batch = 500;
  for (let i = 0; i < chunks.length; i += batch) {
    const part = chunks.slice(i, i + batch);
    await sql`
      insert into document_chunks (document_id, assistant_id, ordinal, heading, content, tsv)
      select ${doc.id}, ${doc.assistantId}, c.ordinal, c.heading, c.content,
             setweight(to_tsvector(${doc.language}::regconfig, coalesce(c.heading, '')), 'A')
          || setweight(to_tsvector(${doc.language}::regconfig, c.content), 'B')
      from unnest(${part.map((c) => c.ordinal)}::int[], ${part.map((c) => c.heading) as string[]}::text[], ${part.map((c) => c.content)}::text[])
        as c(ordinal, heading, content)`;
  }
  await sql`
    update documents set status = 'ready', error = null, chunk_count = ${chunks.length},
      name = coalesce(${doc.name ?? null}, name), mime_type = coalesce(${doc.mimeType ?? null}, mime_type)
    where id = ${doc.id}`;
}

export async function finishJob(sql: Db, jobId: number): Promise<void> {
  await sql`delete from ingestion_jobs where id = ${jobId}`;
}

/** A failed attempt that will be tried again at `retryInMs`; the document shows the error meanwhile. */
export async function scheduleRetry(
  sql: Db,
  job: { id: number; documentId: string },
  error: string,
  retryInMs: number,
): Promise<void> {
  await sql`
    update ingestion_jobs set run_at = now() + make_interval(secs => ${retryInMs / 1000}), locked_until = null,
      lease_token = null, last_error = ${error}
    where id = ${job.id}`;
  await sql`update documents set status = 'pending', error = ${error} where id = ${job.documentId}`;
}

/** Gives up: the document is failed with the error, its old chunks removed, the job gone. */
export async function failDocument(sql: Db, job: { id: number; documentId: string }, error: string): Promise<void> {
  await sql`delete from document_chunks where document_id = ${job.documentId}`;
  await sql`update documents set status = 'failed', error = ${error}, chunk_count = 0 where id = ${job.documentId}`;
  await sql`delete from ingestion_jobs where id = ${job.id}`;
}

/** Hands a job back untouched (shutdown mid-job): the next worker may claim it at once. */
export async function releaseJob(sql: Db, job: { id: number; documentId: string }, leaseToken: string): Promise<void> {
  const rows = await sql`
    update ingestion_jobs set locked_until = null, lease_token = null, attempts = greatest(attempts - 1, 0)
    where id = ${job.id} and lease_token = ${leaseToken} returning id`;
  if (rows.length > 0) await sql`update documents set status = 'pending' where id = ${job.documentId}`;
}
