/**
 * Analysis: what is read from a conversation once it ends (summary, structured data, success, sentiment), by the
 * assistant's hosted chat model or offline by the local engine, on a durable queue any instance works; delivered as
 * the conversation.analyzed webhook. The app registers it with {@link registerAnalysis}.
 */
import type { Sql } from '../db/index.js';
import type { AnyRoute } from '../http/index.js';
import type { Logger } from '../log/index.js';
import type { Meter } from '../metering/index.js';
import type { ChatProviders } from '../providers/chat/index.js';
import type { RecordingLinkOf } from './report.js';
import { analysisRoutes } from './routes.js';
import { createAnalysisWorker, type AnalysisWorker, type AnalysisWorkerOptions } from './worker.js';

export { analysisSchema, type AnalysisView } from './schemas.js';
export { analysisOf, analyseEndedChat } from './service.js';
export { createAnalysisWorker, type AnalysisWorker, type AnalysisWorkerOptions } from './worker.js';

export interface AnalysisCapability {
  routes: AnyRoute[];
  worker: AnalysisWorker;
}

/** Builds the routes and the (not yet started) queue worker. Does no I/O. */
export function analysisCapability(
  deps: { sql: Sql; log: Logger; providers: ChatProviders; recordingLinkOf?: RecordingLinkOf; meter?: Meter },
  options: AnalysisWorkerOptions = {},
): AnalysisCapability {
  const log = deps.log.child({ capability: 'analysis' });
  const worker = createAnalysisWorker(
    {
      sql: deps.sql,
      log,
      providers: deps.providers,
      ...(deps.recordingLinkOf ? { recordingLinkOf: deps.recordingLinkOf } : {}),
      ...(deps.meter ? { meter: deps.meter } : {}),
    },
    options,
  );
  return { routes: analysisRoutes({ sql: deps.sql, onQueued: () => worker.kick() }), worker };
}

/** Adds the capability's routes and its worker (started on listen, stopped on close) to the app's. */
export function registerAnalysis(
  deps: { sql: Sql; log: Logger; providers: ChatProviders; recordingLinkOf?: RecordingLinkOf; meter?: Meter },
  routes: AnyRoute[],
  lifecycle: Array<{ name: string; start(): void; stop(): Promise<void> }>,
): void {
  const analysis = analysisCapability(deps);
  routes.push(...analysis.routes);
  lifecycle.push({ name: 'analysis worker', start: () => analysis.worker.start(), stop: () => analysis.worker.stop() });
}
