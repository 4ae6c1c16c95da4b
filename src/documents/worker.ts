import { randomBytes } from 'node:crypto';
import type { Admission } from '../admission/index.js';
import { createPollLoop } from '../jobs/poll-loop.js';
import type { Sql, TransactionSql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import { isUsageRefusal, MeteringErrorCodes, type Meter, type Reservation } from '../metering/index.js';
import { addDocumentTerms, lockAssistantTerms, removeDocumentTerms } from '../retrieval/index.js';
import { IngestionError, type IngestionResult } from './ingestion.js';
import * as q from './queries.js';

export interface IngestionWorkerOptions {
  sql: Sql;
  log: Logger;
  /**
   * Meters every job (kind `ingestion`, priced per stored chunk): admitted after chunking and before the chunks are
   * stored, settled once they are, released otherwise. Its mode decides: enforce refuses, shadow records, off writes nothing.
   */
  meter: Meter;
  /** Turns a document into chunks (ingestDocument with its deps bound). */
  process: (doc: q.DocumentSource, signal: AbortSignal) => Promise<IngestionResult>;
  /** Idle poll interval (other instances' jobs, retries coming due). Default 1000 ms. */
  pollMs?: number;
  /** How long a claim holds before another worker may take the job over. Default 60 s; renewed while running. */
  leaseMs?: number;
  /** Delay before retry number `attempt` (1-based). Default: 2 s doubling, at most 5 min, ±20 % jitter. */
  backoffMs?: (attempt: number) => number;
  /** Runs inside the transaction that stores a document's final outcome (webhooks queue document events with it). */
  onOutcome?: (tx: TransactionSql, doc: q.DocumentSource, failure?: string) => Promise<void>;
  /**
   * The instance's work pool (src/admission): a job is claimed only when a slot is free with nobody waiting, and holds
   * it while it runs. Ingestion is background work: under overload it waits for the requests, never the reverse.
   */
  admission?: Pick<Admission, 'tryAcquire'>;
}

/** A background loop; the app starts it on listen and stops it on close (never at import or route build). */
export interface IngestionWorker {
  start(): void;
  /** Stops claiming, aborts the running job (its lease lapses and another worker retries it), waits for the loop. */
  stop(): Promise<void>;
  /** Wake the loop now (a document was just queued on this instance). */
  kick(): void;
  /** Claims and processes at most one job; resolves whether one was found (false too while the instance is busy). */
  runOnce(): Promise<boolean>;
}

export function defaultBackoffMs(attempt: number): number {
  const base = Math.min(300_000, 2000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * The document's error when the meter refuses a job in enforce mode (written for the owner; the job is not retried:
 * the owner reprocesses the document once usage is available again).
 */
export const INGESTION_REFUSED_MESSAGE =
  'Not processed: the usage budget for this billing period is used up. Reprocess the document once usage is available again (next billing period, a plan upgrade or added credit).';

function refusedMessage(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === MeteringErrorCodes.LIMIT_REACHED || code === MeteringErrorCodes.REQUEST_CAP_REACHED)
    return INGESTION_REFUSED_MESSAGE;
  // Account inactive (or any other refusal): its own sentence, e.g. "The hosting account is suspended."
  return `Not processed: ${(err as Error).message}`;
}

/**
 * Reserves one job attempt's price before its chunks are stored. A usage refusal becomes a non-retryable
 * IngestionError (the document is failed with an owner-facing message); any other failure is retried as usual.
 */
async function admitIngestion(meter: Meter, doc: q.DocumentSource, chunks: number): Promise<Reservation> {
  try {
    return await meter.admit({
      accountId: doc.accountId,
      kind: 'ingestion',
      // Documents are added from the dashboard (uploads, sources); a v1 reprocess runs the same job.
      source: 'dashboard',
      audience: 'owner',
      countsAsRequest: false,
      estimateMicros: meter.priceIngestion(chunks),
      assistantId: doc.assistantId,
    });
  } catch (err) {
    if (isUsageRefusal(err)) throw new IngestionError(refusedMessage(err), { retryable: false, cause: err });
    throw err;
  }
}

export function createIngestionWorker(options: IngestionWorkerOptions): IngestionWorker {
  const { sql, log, meter } = options;
  const pollMs = options.pollMs ?? 1000;
  const leaseMs = options.leaseMs ?? 60_000;
  const backoff = options.backoffMs ?? defaultBackoffMs;

  async function runOnce(): Promise<boolean> {
    if (options.admission === undefined) return runJob();
    const release = options.admission.tryAcquire();
    if (release === undefined) return false; // busy: the next poll tries again
    try {
      return await runJob();
    } finally {
      release();
    }
  }

  async function runJob(): Promise<boolean> {
    const token = randomBytes(12).toString('base64url');
    const job = await q.claimJob(sql, token, leaseMs);
    if (!job) return false;
    const jobLog = log.child({ jobId: job.id, documentId: job.documentId, attempt: job.attempts });
    const doc = await q.loadSource(sql, job.documentId);
    if (!doc) {
      await q.finishJob(sql, job.id);
      return true;
    }
    await q.markProcessing(sql, job.documentId);
    const controller = new AbortController();
    const onStop = () => controller.abort();
    loop.signal.addEventListener('abort', onStop, { once: true });
    const renew = setInterval(
      () => {
        q.renewLease(sql, job.id, token, leaseMs)
          .then((held) => {
            if (!held) controller.abort(); // reprocessed or deleted meanwhile: stop wasting work
          })
          .catch((err: unknown) => jobLog.warn({ err }, 'ingestion lease renewal failed'));
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    // Billing (no double billing across retries): every attempt that reaches the priced part holds a reservation of
    // its own, and closes it exactly once: settled when its chunks were stored (the job is then done, so no later
    // attempt exists), released when they were not (failure, shutdown, or fenced by a newer claim, which bills itself).
    let reservation: Reservation | undefined;
    try {
      const started = Date.now();
      const result = await options.process(doc, controller.signal);
      const chunks = result.chunks.length;
      reservation = await admitIngestion(meter, doc, chunks);
      const stored = await sql.begin(async (tx) => {
        // The lock order of q.lockDocument's note: assistant, terms, document, job (a reprocess takes document, job).
        if (!(await q.lockAssistantForWrite(tx, doc.assistantId))) return false;
        await lockAssistantTerms(tx, doc.assistantId);
        if (!(await q.lockDocument(tx, doc.id))) return false; // deleted meanwhile
        if (!(await q.holdsLease(tx, job.id, token))) return false; // fenced: a newer claim owns it
        await removeDocumentTerms(tx, doc.assistantId, doc.id);
        await q.replaceChunks(
          tx,
          {
            id: doc.id,
            assistantId: doc.assistantId,
            language: doc.language,
            name: result.name,
            mimeType: result.mimeType,
          },
          result.chunks,
        );
        await addDocumentTerms(tx, doc.assistantId, doc.id);
        await q.finishJob(tx, job.id);
        await options.onOutcome?.(tx, doc);
        return true;
      });
      const held = reservation;
      reservation = undefined; // closed below, never by the failure path: the job's outcome is already decided
      let costMicros = 0;
      try {
        if (stored)
          costMicros = (await meter.settle(held, { actualMicros: meter.priceIngestion(chunks), units: chunks }))
            .costMicros;
        else await meter.release(held);
      } catch (err) {
        // The chunks' fate is committed; an unclosed reservation is expired by the usage sweeper (never billed twice).
        jobLog.error({ err, reservationId: held.id, stored }, 'closing the ingestion reservation failed');
      }
      jobLog.info({ chunks, costMicros, durationMs: Date.now() - started, stored }, 'document ingested');
    } catch (err) {
      if (reservation) {
        const held = reservation;
        await meter
          .release(held)
          .catch((releaseErr: unknown) =>
            jobLog.warn({ err: releaseErr, reservationId: held.id }, 'could not release the ingestion reservation'),
          );
      }
      if (loop.signal.aborted) {
        await q
          .releaseJob(sql, job, token)
          .catch((releaseErr: unknown) => jobLog.warn({ err: releaseErr }, 'could not release the job'));
        jobLog.info('ingestion interrupted by shutdown; the job will be claimed again');
        return true;
      }
      const retryable = !(err instanceof IngestionError) || err.retryable;
      const message = err instanceof IngestionError ? err.message : 'Processing failed unexpectedly.';
      if (!(err instanceof IngestionError)) jobLog.error({ err }, 'ingestion failed unexpectedly');
      const giveUp = !retryable || job.attempts >= job.maxAttempts;
      await sql.begin(async (tx) => {
        // Same lock order as the store transaction above.
        if (giveUp) {
          if (!(await q.lockAssistantForWrite(tx, doc.assistantId))) return;
          await lockAssistantTerms(tx, doc.assistantId);
        }
        if (!(await q.lockDocument(tx, doc.id))) return;
        if (!(await q.holdsLease(tx, job.id, token))) return;
        if (giveUp) {
          await removeDocumentTerms(tx, doc.assistantId, doc.id);
          await q.failDocument(tx, job, message);
          await options.onOutcome?.(tx, doc, message);
        } else await q.scheduleRetry(tx, job, message, backoff(job.attempts));
      });
      jobLog.warn({ retryable, giveUp, error: message }, 'document ingestion attempt failed');
    } finally {
      clearInterval(renew);
      loop.signal.removeEventListener('abort', onStop);
    }
    return true;
  }

  const loop = createPollLoop({ name: 'ingestion worker', pollMs, log, runOnce });

  return {
    start: () => loop.start(),
    stop: () => loop.stop(),
    kick: () => loop.kick(),
    runOnce,
  };
}
