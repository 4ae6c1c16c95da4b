/** The shapes buildApp takes and returns: its options, the lifecycle of background work, the running app. */
import type { ChatProviders } from './providers/chat/index.js';
import type { DocumentsOptions } from './documents/index.js';
import type { HttpServer, AnyRoute, OpenApiOptions } from './http/index.js';
import type { ThresholdSink } from './metering/index.js';
import type { VoiceCapabilityOptions, VoiceService } from './voice/index.js';
import type { WebhooksOptions } from './webhooks/index.js';

export interface BuildOptions {
  /** Check every success body against its schema (on in tests). */
  validateResponses?: boolean;
  /** Voice session knobs (tests: a manual supervision clock, short ownership timings, a quota, relay limits). */
  voice?: VoiceCapabilityOptions;
  /** Knowledge knobs (tests: the URL fetcher's address policy, fast ingestion retries, a chat provider set). */
  knowledge?: KnowledgeOptions;
  /**
   * Each budget threshold crossing, once, inside the transaction that recorded it (default: a
   * `budget.threshold_crossed` webhook event queued in that transaction).
   */
  onThresholdCrossed?: ThresholdSink;
  /** Webhook delivery knobs (tests: a short retry schedule, fast polling). */
  webhooks?: WebhooksOptions;
}

export interface KnowledgeOptions {
  documents?: DocumentsOptions;
  chatProviders?: ChatProviders;
}

/** Background work: started once the server listens, stopped (in reverse order) before the HTTP server drains. */
export interface LifecycleItem {
  name: string;
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

export interface ParleyApp {
  readonly server: HttpServer;
  readonly routes: readonly AnyRoute[];
  /** The v1 OpenAPI document (the contract of record). */
  readonly openapi: Record<string, unknown>;
  listen(host: string, port: number): Promise<number>;
  /**
   * SIGTERM, first step: readiness 503 (the proxy stops sending new work), no new voice mints; everything else keeps
   * being served while the calls here go on, until they end or `timeoutMs` passes. close() follows.
   */
  drain(timeoutMs: number): Promise<void>;
  /** Drain: background work stopped (voice sessions end with `shutdown`), then readiness 503, listen socket closed, in-flight finished or cut at the deadline. */
  close(graceMs: number): Promise<void>;
  /** The voice session service of this instance (the media relay and tests reach live sessions through it). */
  readonly voice: VoiceService;
}

/** How each authenticator reads in OpenAPI. */
export const openApiSecurity: Pick<OpenApiOptions, 'security' | 'securitySchemes'> = {
  security: {
    none: [],
    bearer: [{ bearerAuth: [] }],
    'bearer-or-keyless': [{}, { bearerAuth: [] }],
    'control-token': [],
  },
  securitySchemes: {
    bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: sk_live_...' },
  },
};

/** What the route table needs from the running app, late-bound. */
export interface AppHooks {
  isDraining(): boolean;
  openApiBytes(): Buffer;
  /** host:port the server listens on, once it does (scenario runs call the server itself). */
  selfAddress?: () => string | undefined;
}
