import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminRoutes, firstOwnerCommand, operatorSocket } from './admin/index.js';
import { registerAnalysis } from './analysis/index.js';
import { analyticsRoutes } from './analytics/index.js';
import { overviewRoutes } from './overview/index.js';
import { assistantRoutes } from './assistants/index.js';
import { chatMeterFrom, chatRoutes } from './chat/index.js';
import { conversationRoutes } from './conversations/index.js';
import { documentsCapability } from './documents/index.js';
import { createChatProviders } from './providers/chat/index.js';
import { transportsOf } from './providers/voice/index.js';
import { createWidgetPolicy, widgetRoutes } from './widget/index.js';
import { admissionPools } from './admission/index.js';
import { webAssetRoutes } from './web-assets/index.js';
import { createAuthenticators, identityRoutes } from './auth/index.js';
import { dashboardRoutes } from './dashboard/index.js';
import { billingRoutes } from './billing/index.js';
import { loadConfig } from './config/index.js';
import { createSql } from './db/index.js';
import type { Deps } from './deps.js';
import { docsRoutesFor } from './docs/index.js';
import { evalsCapability } from './evals/index.js';
import { healthRoutes, readinessOf } from './health/routes.js';
import {
  buildOpenApiDocument,
  createHttpServer,
  type AnyRoute,
  type AnySocketRoute,
  type Authenticator,
  type HttpServer,
  type RequestRecord,
} from './http/index.js';
import { accessLevel, createLogger, fixedFieldLogger } from './log/index.js';
import { Meter, startUsageSweeper, systemClock, usageRoutes, type UsageSweeper } from './metering/index.js';
import { Metrics, metricsListener, metricsRoutes, observeMeter, observeVoiceQuota } from './metrics/index.js';
import { MemoryStore } from './store/index.js';
import {
  meteredVoiceQuota,
  recordingLinksOf,
  voiceCallsOf,
  voiceCapability,
  type VoiceService,
} from './voice/index.js';
import { enqueueBudgetAlert, enqueueEvent, webhooksCapability, withWebhookEvents } from './webhooks/index.js';
import { telephonyCapability } from './telephony/index.js';
import { callsCapability } from './calls/index.js';
import { toolsCapability } from './tools/index.js';
import { scenarioDrivers, scenariosCapability } from './scenarios/index.js';

import { openApiSecurity, type AppHooks, type BuildOptions, type LifecycleItem, type ParleyApp } from './app-types.js';

export {
  openApiSecurity,
  type AppHooks,
  type BuildOptions,
  type KnowledgeOptions,
  type LifecycleItem,
  type ParleyApp,
} from './app-types.js';
export const API_VERSION = '1.4.0';

/**
 * Every capability's routes, authenticators and sockets. Building them does no I/O, so the same table
 * serves the server, the OpenAPI document and the fingerprint.
 */
export function collectCapabilities(
  deps: Deps,
  hooks: AppHooks,
  options: Pick<BuildOptions, 'voice' | 'knowledge' | 'onThresholdCrossed' | 'webhooks'> = {},
): {
  routes: AnyRoute[];
  authenticators: Record<string, Authenticator>;
  sockets: AnySocketRoute[];
  lifecycle: LifecycleItem[];
  voice: VoiceService;
  metrics: Metrics | undefined;
} {
  const authenticators: Record<string, Authenticator> = {};
  const sockets: AnySocketRoute[] = [];
  const lifecycle: LifecycleItem[] = [];
  const admission = admissionPools(deps.config);
  lifecycle.push({ name: 'admission', start: async () => undefined, stop: async () => admission.close() });
  // One meter per instance: chat, ingestion, evals and voice reserve and settle through it (src/metering).
  // Metrics only when someone can read them (METRICS_TOKEN or METRICS_PORT): otherwise nothing is counted.
  const metrics =
    deps.config.METRICS_TOKEN !== undefined || deps.config.METRICS_PORT > 0
      ? new Metrics({ instanceId: deps.config.instanceId })
      : undefined;
  const meter = new Meter({
    sql: deps.sql,
    config: deps.config,
    log: deps.log.child({ capability: 'metering' }),
    onThresholdCrossed: options.onThresholdCrossed ?? ((alert, tx) => enqueueBudgetAlert(tx, { ...alert })),
    ...(deps.voiceProvider?.kind === 'local' ? { voiceSecondMicros: 0 } : {}), // on this machine: costs nothing
  });
  if (metrics) observeMeter(meter, metrics);
  // Webhooks first: documents and voice report their facts to it (document and call events, in their transactions).
  const webhooks = webhooksCapability(deps, options.webhooks);
  // Knowledge: assistants, documents (and their ingestion worker), retrieval, chat, conversations, analytics, widget.
  const documents = documentsCapability(
    { ...deps, meter },
    { onOutcome: webhooks.documentOutcome, admission: admission.work, ...options.knowledge?.documents },
  );
  const tools = toolsCapability(deps);
  const widgetPolicy = createWidgetPolicy({ config: deps.config, store: deps.store, sql: deps.sql });
  // Providers are built once, in deps.ts; tests may pass their own chat providers.
  const chatProviders = options.knowledge?.chatProviders ?? deps.chatProviders ?? createChatProviders(deps.config);
  // Voice minutes and concurrency come from the same meter (300 s grants; VOICE_MAX_CONCURRENT_SESSIONS per instance).
  const meteredQuota = meteredVoiceQuota(meter, {
    maxConcurrentSessions: deps.config.VOICE_MAX_CONCURRENT_SESSIONS,
    log: deps.log.child({ capability: 'voice-quota' }),
  });
  const voiceQuota = webhooks.announceVoiceEnds(metrics ? observeVoiceQuota(meteredQuota, metrics) : meteredQuota);
  const voice = voiceCapability(deps, {
    keylessPolicy: widgetPolicy,
    quota: voiceQuota,
    ...(metrics ? { observer: metrics } : {}),
    onSessionStored: webhooks.voiceSessionStored,
    admission: admission.mints,
    tools: tools.runtime,
    // The built-in transfer_call: the calls capability (built below, on telephony) carries it out.
    transferPhoneCall: (sessionId, to) => calls.transferSessionCall(sessionId, to),
    ...options.voice,
  });
  sockets.push(...voice.sockets);
  metrics?.watchVoice(voice.figures);
  const telephony = telephonyCapability({
    ...deps,
    voice: voice.service,
    phone: voice.phone,
    admission: admission.mints,
  });
  const calls = callsCapability({
    sql: deps.sql,
    log: deps.log,
    meter,
    carrier: telephony.outbound,
    batchPollMs: deps.config.CALL_BATCH_POLL_MS,
  });
  lifecycle.push({ name: 'call batches', start: () => calls.worker.start(), stop: () => calls.worker.stop() });
  const chatDeps = {
    sql: deps.sql,
    log: deps.log.child({ capability: 'chat' }),
    providers: chatProviders,
    meter: chatMeterFrom(meter),
    policy: widgetPolicy,
    admission: admission.work,
    tools: tools.runtime,
  };
  const routes: AnyRoute[] = [
    ...healthRoutes(readinessOf(deps, voice.readiness), hooks.isDraining),
    ...docsRoutesFor(hooks.openApiBytes),
    ...identityRoutes(deps),
    ...voice.routes,
    ...assistantRoutes({ sql: deps.sql, meter }),
    ...documents.routes,
    ...conversationRoutes({
      sql: deps.sql,
      recordingsOf: (conversationId) => recordingLinksOf(deps.sql, voice.recordings, conversationId),
      voiceCallsOf: (conversationId) => voiceCallsOf(deps.sql, conversationId),
      removeRecording: (sessionId) => voice.recordings.remove(sessionId),
    }),
    ...analyticsRoutes(deps),
    ...overviewRoutes(deps),
    ...widgetRoutes({
      sql: deps.sql,
      policy: widgetPolicy,
      voiceTransports: deps.voiceProvider === undefined ? [] : transportsOf(deps.voiceProvider),
    }),
    ...webAssetRoutes(),
    ...chatRoutes(chatDeps),
    ...tools.routes,
    ...usageRoutes(meter, deps.config),
    ...webhooks.routes,
    ...telephony.routes,
    ...calls.routes,
    ...adminRoutes({ sql: deps.sql, store: deps.store, meter, adminUserIds: deps.config.ADMIN_USER_IDS }),
    ...billingRoutes({
      sql: deps.sql,
      config: deps.config,
      log: deps.log.child({ capability: 'billing' }),
      clock: systemClock,
    }),
    // The owner web app (web/dashboard) and what it may offer; outside /api/v1, so never in the document.
    ...dashboardRoutes({
      signupEnabled: deps.config.SIGNUP_ENABLED,
      siblings: () => routes,
      voiceTransports: deps.voiceProvider === undefined ? [] : transportsOf(deps.voiceProvider),
      createOwnerCommand: firstOwnerCommand(deps.sql),
    }),
  ];
  Object.assign(authenticators, createAuthenticators(deps), voice.authenticators);
  lifecycle.push(voice.lifecycle);
  lifecycle.push({
    name: 'ingestion worker',
    start: () => documents.worker.start(),
    stop: () => documents.worker.stop(),
  });
  // The operator CLI reaches a server on the embedded database through this socket (PGlite admits one process).
  if (deps.embeddedDatabase) lifecycle.push(operatorSocket({ sql: deps.sql, config: deps.config, log: deps.log }));
  let sweeper: UsageSweeper | undefined;
  lifecycle.push({
    name: 'usage sweeper',
    start: () => void (sweeper = startUsageSweeper(meter)),
    stop: async () => sweeper?.stop(),
  });
  lifecycle.push({
    name: 'webhook delivery',
    start: () => webhooks.worker.start(),
    stop: () => webhooks.worker.stop(),
  });
  // Evals (dashboard-only): cases run like chat turns by a background runner, each metered as kind `eval`.
  const evals = evalsCapability({
    sql: deps.sql,
    log: deps.log.child({ capability: 'evals' }),
    meter,
    providers: chatProviders,
  });
  routes.push(...evals.routes);
  lifecycle.push({ name: 'eval runner', start: () => evals.runner.start(), stop: () => evals.runner.stop() });
  // Scenarios: simulated callers over the real chat and voice paths (conversations of source `test`).
  const scenarios = scenariosCapability({
    sql: deps.sql,
    log: deps.log.child({ capability: 'scenarios' }),
    drivers: scenarioDrivers({
      ...deps,
      chat: chatDeps,
      voice: deps.voiceProvider ? voice.service : undefined,
      phone: deps.voiceProvider ? voice.phone : undefined,
      selfAddress: () => hooks.selfAddress?.(),
    }),
    onCompleted: ({ accountId, figures, ...run }) =>
      enqueueEvent(deps.sql, accountId, 'scenario-run.completed', {
        ...run,
        passRate: figures?.passRate ?? null,
        passed: figures?.passed ?? 0,
        failed: figures?.failed ?? 0,
        errored: figures?.errored ?? 0,
        turnLatencyP50Ms: figures?.turnLatencyP50Ms ?? null,
        turnLatencyP95Ms: figures?.turnLatencyP95Ms ?? null,
      }).then(() => undefined),
  });
  routes.push(...scenarios.routes);
  lifecycle.push(scenarios.lifecycle);
  const recordingLinkOf = voice.recordingLinks.ofConversation.bind(voice.recordingLinks);
  registerAnalysis(
    { sql: deps.sql, log: deps.log, providers: chatProviders, recordingLinkOf, meter },
    routes,
    lifecycle,
  );
  if (metrics) {
    const { METRICS_TOKEN: token, METRICS_PORT: port } = deps.config;
    if (port > 0) {
      const listener = metricsListener(metrics, {
        host: deps.config.HOST,
        port,
        token,
        log: deps.log.child({ component: 'metrics' }),
      });
      lifecycle.push({ name: 'metrics listener', start: listener.start, stop: listener.stop });
    } else if (token !== undefined) {
      routes.push(...metricsRoutes(metrics, token));
    }
  }
  return { routes, authenticators, sockets, lifecycle, voice: voice.service, metrics };
}

/** Registers every capability on one uWS app. Never listens by itself (main.ts does). */
export function buildApp(deps: Deps, options: BuildOptions = {}): ParleyApp {
  let server: HttpServer | undefined;
  let documentBytes: Buffer | undefined;
  let draining = false;
  let selfAddress: string | undefined;
  const { routes, authenticators, sockets, lifecycle, voice, metrics } = collectCapabilities(
    deps,
    {
      isDraining: () => draining || (server?.draining ?? false),
      openApiBytes: () => documentBytes!,
      selfAddress: () => selfAddress,
    },
    options,
  );
  const openapi = v1Document(routes);
  documentBytes = Buffer.from(JSON.stringify(openapi));
  const httpServer = createHttpServer({
    log: deps.log,
    routes,
    sockets,
    authenticators,
    bodyLimitBytes: deps.config.BODY_LIMIT_BYTES,
    bodyReadTimeoutMs: deps.config.BODY_READ_TIMEOUT_MS,
    trustProxy: deps.config.TRUST_PROXY,
    validateResponses: options.validateResponses ?? false,
    ...withRequestRecords(deps, metrics),
  });
  server = httpServer;
  return {
    server: httpServer,
    routes,
    openapi,
    voice,
    async listen(host, port) {
      const bound = await httpServer.listen(host, port);
      // Scenario runs call this server itself: a wildcard address is reached on loopback.
      const reach = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
      selfAddress = `${reach.includes(':') ? `[${reach}]` : reach}:${bound}`;
      for (const item of lifecycle) await item.start();
      return bound;
    },
    async drain(timeoutMs) {
      draining = true;
      await voice.drain(timeoutMs);
    },
    async close(graceMs) {
      // Background work first: voice sessions end with `shutdown` while their gate streams can still say so.
      for (const item of [...lifecycle].reverse()) {
        try {
          await item.stop();
        } catch (err) {
          deps.log.error({ err, lifecycle: item.name }, 'stopping background work failed');
        }
      }
      await httpServer.close(graceMs);
    },
  };
}

/**
 * The access log (one line per request: method, route pattern, status, duration, request id; a sample of them when
 * ACCESS_LOG_SAMPLE_RATE < 1, every 5xx always) and the request metrics. Neither: no hook, nothing measured.
 */
function withRequestRecords(deps: Deps, metrics: Metrics | undefined): { onRequest?: (r: RequestRecord) => void } {
  const rate = deps.config.ACCESS_LOG_SAMPLE_RATE;
  if (rate <= 0 && metrics === undefined) return {};
  // Fixed fields only (below): no redaction pass, a quarter of the line's cost.
  const access = fixedFieldLogger(deps.log, { component: 'access' });
  return {
    onRequest: (r) => {
      metrics?.request(r);
      if (rate > 0 && (rate >= 1 || r.status >= 500 || Math.random() < rate)) {
        access[accessLevel(r.route, r.status)](
          {
            method: r.method,
            route: r.route,
            status: r.status,
            durationMs: Math.round(r.durationMs * 10) / 10,
            requestId: r.requestId,
          },
          'request',
        );
      }
    },
  };
}

export function v1Document(routes: readonly AnyRoute[]): Record<string, unknown> {
  const document = buildOpenApiDocument(routes, {
    title: 'Parley API',
    version: API_VERSION,
    description:
      'Hosted AI assistants by text chat and realtime voice. Errors share one body: {error, code, reason?, details?, requestId}.',
    include: (route) => route.path.startsWith('/api/v1/') && route.openapi.hidden !== true,
    ...openApiSecurity,
  });
  // What Parley POSTs to webhook endpoints is contract too (OpenAPI 3.1 `webhooks`).
  return withWebhookEvents(document);
}

/**
 * The v1 document without a running service (for `npm run openapi:fingerprint`): the route table is
 * built over clients that are never used (postgres.js connects lazily; the memory store does no I/O).
 */
export function routeTableDocument(): Record<string, unknown> {
  return v1Document(routeTable());
}

/** Every capability's routes, built without I/O (see routeTableDocument). */
export function routeTable(): AnyRoute[] {
  const config = loadConfig({
    DATA_DIR: join(tmpdir(), 'parley-openapi'),
    SECRET_KEY: 'x'.repeat(32),
    LOG_LEVEL: 'silent',
  });
  const log = createLogger({ level: 'silent' });
  const sql = createSql('postgres://openapi.invalid/none', { max: 1, log });
  const store = new MemoryStore();
  const deps: Deps = { config, log, sql, store, embeddedDatabase: false, close: async () => undefined };
  const { routes } = collectCapabilities(deps, { isDraining: () => false, openApiBytes: () => Buffer.alloc(0) });
  void store.close();
  void sql.end({ timeout: 0 });
  return routes;
}
