import { randomBytes } from 'node:crypto';
import type { Sql } from '../db/index.js';
import type { AddressPolicy, LookupAll } from '../documents/index.js';
import { createPollLoop } from '../jobs/poll-loop.js';
import type { Logger } from '../log/index.js';
import * as q from './queries.js';
import type { SecretBox } from './secret-box.js';
import { sendWebhook, type SendResult } from './sender.js';
import { signatureHeader } from './signature.js';

/**
 * The Standard Webhooks retry schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after
 * each failed attempt (ten attempts over about three days), each delay with ±10 % jitter.
 */
export const STANDARD_SCHEDULE_MS: readonly number[] = Object.freeze([
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
]);

/** Messages (and their deliveries) are kept this long for the deliveries list and replays, then deleted hourly. */
export const RETENTION_DAYS = 30;

export interface DeliveryWorkerOptions {
  sql: Sql;
  log: Logger;
  secrets: SecretBox;
  /** Where a webhook may be sent (the URL sources' policy, or everything with WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  policy: AddressPolicy;
  lookup?: LookupAll;
  /** Delay before attempt n+1 (index n; index 0 is the first attempt). Default {@link STANDARD_SCHEDULE_MS}. */
  scheduleMs?: readonly number[];
  /** One attempt's bound, connect to last byte. Default 15 s. */
  timeoutMs?: number;
  /** Requests in flight on this instance. Default 32. */
  maxInFlight?: number;
  /** Requests in flight to one endpoint (counted over the leases every instance holds). Default 4. */
  maxPerEndpoint?: number;
  /** Idle poll interval (messages enqueued elsewhere, retries coming due). Default 1000 ms. */
  pollMs?: number;
}

export interface DeliveryWorker {
  start(): void;
  /** Stops claiming, abandons the requests in flight (their attempts are given back, due at once), waits for them. */
  stop(): Promise<void>;
  /** Wake the loop now (something was just enqueued here, or a request finished). */
  kick(): void;
}

function withJitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { sql, log, secrets } = options;
  const schedule = options.scheduleMs ?? STANDARD_SCHEDULE_MS;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxInFlight = options.maxInFlight ?? 32;
  const maxPerEndpoint = options.maxPerEndpoint ?? 4;
  // A lease outlives the attempt's own bound, so a live worker is never overtaken; a dead one's lapses soon after.
  const leaseMs = timeoutMs + 15_000;
  const inFlight = new Set<Promise<void>>();
  let abandon = new AbortController();

  /** The secrets signing now: the current one, and the previous one during its 24 h overlap after a rotation. */
  function signingSecrets(d: q.ClaimedDelivery): string[] {
    const current = secrets.open(d.secretSealed, d.endpointId);
    const previous =
      d.previousSecretSealed !== null && d.previousSecretExpiresAt !== null && d.previousSecretExpiresAt > new Date()
        ? [secrets.open(d.previousSecretSealed, d.endpointId)]
        : [];
    return [current, ...previous];
  }

  async function attempt(d: q.ClaimedDelivery, token: string): Promise<void> {
    const dlog = log.child({ deliveryId: d.id, endpointId: d.endpointId, messageId: d.messageId, attempt: d.attempts });
    let result: SendResult;
    try {
      const timestamp = Math.floor(Date.now() / 1000);
      let signature: string;
      try {
        signature = signatureHeader(signingSecrets(d), d.messageId, timestamp, d.body);
      } catch (err) {
        dlog.error({ err: { message: (err as Error).message } }, 'webhook secret could not be opened');
        result = { error: 'the signing secret cannot be read on this deployment; rotate the secret' };
        return await settle(d, token, result, dlog);
      }
      const headers = {
        'webhook-id': d.messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      };
      result = await sendWebhook(d.url, headers, d.body, {
        policy: options.policy,
        timeoutMs,
        signal: abandon.signal,
        ...(options.lookup ? { lookup: options.lookup } : {}),
      });
    } catch (err) {
      // Shutdown mid-request: the attempt is given back (the same webhook-id goes out again, from any instance).
      await q.releaseClaim(sql, d.id, token).catch(() => undefined);
      if (!abandon.signal.aborted) dlog.error({ err }, 'webhook attempt failed unexpectedly');
      return;
    }
    await settle(d, token, result, dlog);
  }

  async function settle(d: q.ClaimedDelivery, token: string, result: SendResult, dlog: Logger): Promise<void> {
    const status = result.status;
    if (status !== undefined && status >= 200 && status < 300) {
      await q.markDelivered(sql, d.id, token, status);
      dlog.info({ status }, 'webhook delivered');
      return;
    }
    if (status === 410) {
      // The standard's signal that the receiver is gone for good: stop sending to it.
      await sql.begin((tx) => q.disableForGone(tx, d.endpointId, d.id));
      dlog.warn('webhook endpoint answered 410 Gone; endpoint disabled');
      return;
    }
    const delay = d.attempts < schedule.length ? schedule[d.attempts] : undefined;
    const nextAttemptAt = delay === undefined ? null : new Date(Date.now() + withJitter(delay));
    const error = result.error ?? `the endpoint answered HTTP ${status}`;
    await q.markAttemptFailed(sql, d.id, token, { statusCode: status ?? null, error, nextAttemptAt });
    dlog.warn({ status, error, retryAt: nextAttemptAt }, 'webhook attempt failed');
  }

  async function runOnce(): Promise<boolean> {
    const free = maxInFlight - inFlight.size;
    if (free <= 0) return false;
    const token = randomBytes(12).toString('base64url');
    const claimed = await q.claimDue(sql, { token, limit: free, perEndpoint: maxPerEndpoint, leaseMs });
    for (const delivery of claimed) {
      const running: Promise<void> = attempt(delivery, token)
        .catch((err: unknown) => log.error({ err, deliveryId: delivery.id }, 'webhook attempt not recorded'))
        .finally(() => {
          inFlight.delete(running);
          loop.kick();
        });
      inFlight.add(running);
    }
    return claimed.length > 0;
  }

  const loop = createPollLoop({ name: 'webhook delivery', pollMs: options.pollMs ?? 1000, log, runOnce });
  let pruner: NodeJS.Timeout | undefined;
  const prune = () =>
    void q
      .pruneMessages(sql, RETENTION_DAYS)
      .then((n) => n > 0 && log.info({ messages: n }, 'old webhook messages deleted'))
      .catch((err: unknown) => log.warn({ err }, 'webhook retention sweep failed'));

  return {
    start() {
      if (abandon.signal.aborted) abandon = new AbortController();
      loop.start();
      pruner ??= setInterval(prune, 3_600_000);
      pruner.unref();
    },
    async stop() {
      if (pruner !== undefined) clearInterval(pruner);
      pruner = undefined;
      await loop.stop();
      abandon.abort();
      await Promise.allSettled([...inFlight]);
    },
    kick: () => loop.kick(),
  };
}
