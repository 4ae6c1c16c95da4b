/**
 * Webhooks: signed events (Standard Webhooks 1.0) pushed to endpoints the owner registers, from a durable outbox in
 * PostgreSQL that any instance delivers. Other capabilities queue events with {@link enqueueEvent}.
 */
import type { Deps } from '../deps.js';
import { publicAddressesOnly, type AddressPolicy, type LookupAll } from '../documents/index.js';
import type { AnyRoute } from '../http/index.js';
import type { Sql, TransactionSql } from '../db/index.js';
import { enqueueDocumentOutcome, enqueueVoiceEnded, enqueueVoiceStarted, type DocumentOutcome } from './events.js';
import { webhookRoutes } from './routes.js';
import { createSecretBox } from './secret-box.js';
export { createSecretBox, type SecretBox } from './secret-box.js';
import { createDeliveryWorker, type DeliveryWorker } from './worker.js';

export { enqueueBudgetAlert, enqueueEvent } from './events.js';
export { withWebhookEvents } from './contract.js';
export { signatureHeader, newEndpointSecret } from './signature.js';

/** Knobs tests turn; production uses the defaults (the standard's schedule, 15 s per attempt). */
export interface WebhooksOptions {
  /** Delay before each attempt (index 0: the first). Default: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
  scheduleMs?: readonly number[];
  pollMs?: number;
  timeoutMs?: number;
  maxInFlight?: number;
  maxPerEndpoint?: number;
  /** Overrides the address policy (and WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  addressPolicy?: AddressPolicy;
  lookup?: LookupAll;
}

export interface WebhooksCapability {
  routes: AnyRoute[];
  /** Started by the running app on listen, stopped on close. */
  worker: DeliveryWorker;
  /** voice.session.started, inside the transaction that stores the new call. */
  voiceSessionStored(tx: TransactionSql, sessionId: string, transport: string): Promise<void>;
  /**
   * Wraps a voice quota so that every settlement (exactly once per admitted call, by whichever instance settles it)
   * is followed by voice.session.ended. A failure to queue is logged; it never disturbs the settlement.
   */
  announceVoiceEnds<Q extends VoiceSettler>(quota: Q): Q;
  /** document.processed / document.failed, inside the transaction that stores the outcome. */
  documentOutcome(tx: TransactionSql, doc: DocumentOutcome, failure?: string): Promise<void>;
}

/** The part of the voice quota seam this capability listens to. */
export interface VoiceSettler {
  settle(request: { sessionId: string }, billableSeconds: number, usageFinalized: boolean): Promise<void>;
}

/** Any address allowed: WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (local development against a receiver on this machine). */
const anyAddress: AddressPolicy = Object.freeze({ isAllowed: () => true });

/** Builds routes, the event hooks and the (not yet started) delivery worker. Does no I/O. */
export function webhooksCapability(
  deps: Pick<Deps, 'sql' | 'log' | 'config'>,
  options: WebhooksOptions = {},
): WebhooksCapability {
  const log = deps.log.child({ capability: 'webhooks' });
  const secrets = createSecretBox(deps.config.secretKey, 'webhook endpoint secrets');
  const allowPrivate = deps.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
  const policy = options.addressPolicy ?? (allowPrivate ? anyAddress : publicAddressesOnly);
  const worker = createDeliveryWorker({
    sql: deps.sql,
    log,
    secrets,
    policy,
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.scheduleMs ? { scheduleMs: options.scheduleMs } : {}),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxInFlight !== undefined ? { maxInFlight: options.maxInFlight } : {}),
    ...(options.maxPerEndpoint !== undefined ? { maxPerEndpoint: options.maxPerEndpoint } : {}),
  });
  const routes = webhookRoutes({
    sql: deps.sql,
    secrets,
    policy: options.addressPolicy ?? (allowPrivate ? null : publicAddressesOnly),
    ...(options.lookup ? { lookup: options.lookup } : {}),
    onQueued: () => worker.kick(),
  });
  const sql: Sql = deps.sql;
  return {
    routes,
    worker,
    voiceSessionStored: (tx, sessionId, transport) => enqueueVoiceStarted(tx, sessionId, transport),
    announceVoiceEnds<Q extends VoiceSettler>(quota: Q): Q {
      const settle: VoiceSettler['settle'] = async (request, billableSeconds, usageFinalized) => {
        await quota.settle(request, billableSeconds, usageFinalized);
        try {
          await enqueueVoiceEnded(sql, request.sessionId);
          worker.kick();
        } catch (err) {
          log.error({ err, voiceSessionId: request.sessionId }, 'voice.session.ended not queued');
        }
      };
      return Object.assign(Object.create(quota) as Q, { settle });
    },
    documentOutcome: async (tx, doc, failure) => {
      await enqueueDocumentOutcome(tx, doc, failure);
      // Kicked before the transaction commits: the worker finds it on this pass or its next poll.
      worker.kick();
    },
  };
}
