/** Documents: uploads and sources, the durable ingestion queue and worker, the guarded URL fetcher. */
import type { Admission } from '../admission/index.js';
import type { Deps } from '../deps.js';
import { publicAddressesOnly, type AddressPolicy } from './address-policy.js';
import { builtinPdfExtractor, type PdfTextExtractor } from './extract/index.js';
import { guardedFetch, type LookupAll } from './fetcher.js';
import { ingestDocument } from './ingestion.js';
import { documentRoutes } from './routes.js';
import { createIngestionWorker, type IngestionWorker, type IngestionWorkerOptions } from './worker.js';
import type { AnyRoute } from '../http/index.js';
import type { Meter } from '../metering/index.js';

export { publicAddressesOnly, allowAlso, isPublicAddress, type AddressPolicy } from './address-policy.js';
export { guardedFetch, GuardedFetchError } from './fetcher.js';
export { parseFetchableUrl, pinnedAgent, resolveAllowed, type LookupAll } from './fetcher.js';
export { createIngestionWorker, INGESTION_REFUSED_MESSAGE } from './worker.js';

/** Knobs tests (and a future deployment setting) turn; production uses the defaults. */
export interface DocumentsOptions {
  addressPolicy?: AddressPolicy;
  lookup?: LookupAll;
  pdf?: PdfTextExtractor;
  fetchTimeoutMs?: number;
  fetchMaxBytes?: number;
  pollMs?: number;
  leaseMs?: number;
  backoffMs?: (attempt: number) => number;
  onOutcome?: IngestionWorkerOptions['onOutcome'];
  /** The instance's work pool (src/admission): document writes wait in it, the worker runs a job only in a free slot. */
  admission?: Admission | undefined;
}

export interface DocumentsCapability {
  routes: AnyRoute[];
  /** Started by the running app on listen, stopped on close. */
  worker: IngestionWorker;
}

/** Builds routes and the (not yet started) ingestion worker, which meters every job through `meter`. Does no I/O. */
export function documentsCapability(
  deps: Pick<Deps, 'sql' | 'log' | 'config'> & { meter: Meter },
  options: DocumentsOptions = {},
): DocumentsCapability {
  const addressPolicy = options.addressPolicy ?? publicAddressesOnly;
  const pdf = options.pdf ?? builtinPdfExtractor;
  const fetchUrl = (url: string, signal: AbortSignal) =>
    guardedFetch(url, {
      policy: addressPolicy,
      ...(options.lookup ? { lookup: options.lookup } : {}),
      maxBytes: options.fetchMaxBytes ?? deps.config.UPLOAD_LIMIT_BYTES,
      timeoutMs: options.fetchTimeoutMs ?? 15_000,
      maxRedirects: 3,
      signal,
    });
  const worker = createIngestionWorker({
    sql: deps.sql,
    log: deps.log.child({ component: 'ingestion' }),
    meter: deps.meter,
    process: (doc, signal) => ingestDocument({ pdf, fetchUrl }, doc, signal),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.backoffMs ? { backoffMs: options.backoffMs } : {}),
    ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
    ...(options.admission ? { admission: options.admission } : {}),
  });
  const routes = documentRoutes({
    sql: deps.sql,
    config: deps.config,
    service: { sql: deps.sql, addressPolicy, onQueued: () => worker.kick() },
    admission: options.admission,
  });
  return { routes, worker };
}
