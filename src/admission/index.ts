import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { AppError } from '../errors/index.js';

/**
 * Admission control in front of the expensive work (a chat turn, a voice mint, a document write): at most `maxInFlight` run at once on this
 * instance, fewer while the event loop is late (the CPU is the limit: more concurrent work only makes every request
 * slower and holds pooled connections open longer). Past that, a request waits in its tenant's queue; queues are
 * served round-robin, so one tenant's flood waits behind itself, never in front of another tenant. The queue is bounded
 * by the wait it means, not by a count: from recent service times, a request whose expected wait exceeds `maxWaitMs`
 * is refused at once with 503 `SERVICE_OVERLOADED` and a `Retry-After` of that expected wait (a burst an idle
 * instance clears in a second is served, whatever its size). A request that still waits past `maxWaitMs`, or finds
 * its tenant's queue at the `maxQueuedPerTenant` backstop (memory, not policy), is refused the same way, before it
 * touched the database. The refusal names no plan, billing or usage (widget visitors see it).
 */
export interface AdmissionOptions {
  /** Expensive requests running at once on this instance (ADMISSION_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** A backstop on requests one tenant may have waiting (ADMISSION_QUEUE_PER_TENANT); 0: refuse at once when full. */
  maxQueuedPerTenant: number;
  /** The longest a request waits (or is expected to wait) for a slot (ADMISSION_QUEUE_WAIT_MS). */
  maxWaitMs: number;
  /** Event-loop delay (worst in the last quarter second) above which only a quarter of the slots are used. */
  loopDelayLimitMs: number;
}

export const AdmissionErrorCodes = { OVERLOADED: 'SERVICE_OVERLOADED' } as const;

/** Counts for tests, metrics and the bench. */
export interface AdmissionStats {
  inFlight: number;
  queued: number;
  admitted: number;
  refused: number;
  loopDelayMs: number;
  /** Recent time a request held its slot (a moving average); undefined before the first one finished. */
  serviceMs: number | undefined;
}

/** Weight of the newest service time in the moving average: recent enough to follow load, smooth enough to not jump. */
const SERVICE_SMOOTHING = 0.2;
/** The longest Retry-After given (a refusal's estimate can be large when service times are). */
const MAX_RETRY_AFTER_SECONDS = 60;

interface Waiter {
  start: () => void;
  refuse: (error: AppError) => void;
}

/** A Retry-After for a wait of `ms`: whole seconds, at least 1, at most a minute. */
const retryAfterSeconds = (ms: number) => Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(ms / 1000)));

const overloaded = (seconds: number) =>
  new AppError(AdmissionErrorCodes.OVERLOADED, 503, 'The service is busy; try again shortly.', {
    headers: { 'retry-after': String(seconds) },
  });

export class Admission {
  private inFlight = 0;
  private queued = 0;
  private admitted = 0;
  private refused = 0;
  /** Waiting requests per tenant; a tenant's key is deleted when its queue empties (Map order = round-robin). */
  private readonly queues = new Map<string, Waiter[]>();
  private readonly histogram: IntervalHistogram;
  private readonly sampler: NodeJS.Timeout;
  private loopDelayMs = 0;
  private serviceMs: number | undefined;

  constructor(private readonly options: AdmissionOptions) {
    this.histogram = monitorEventLoopDelay({ resolution: 10 });
    this.histogram.enable();
    this.sampler = setInterval(() => {
      this.loopDelayMs = this.histogram.max / 1e6;
      this.histogram.reset();
      this.dispatch();
    }, 250);
    this.sampler.unref();
  }

  /** The slots usable now: all of them, or a quarter while the event loop is late. */
  private get capacity(): number {
    const { maxInFlight, loopDelayLimitMs } = this.options;
    return this.loopDelayMs > loopDelayLimitMs ? Math.max(1, Math.floor(maxInFlight / 4)) : maxInFlight;
  }

  /**
   * Waits for a slot for `tenant` and resolves with its release (call it exactly once, when the work is over;
   * later calls do nothing). Rejects with 503 SERVICE_OVERLOADED when the tenant's queue is full, the wait is too
   * long, or `signal` aborts (the caller left).
   */
  acquire(tenant: string, signal?: AbortSignal): Promise<() => void> {
    if (this.queued === 0 && this.inFlight < this.capacity) return Promise.resolve(this.start());
    const queue = this.queues.get(tenant) ?? [];
    const expectedMs = this.expectedWaitMs();
    if (queue.length >= this.options.maxQueuedPerTenant || expectedMs > this.options.maxWaitMs) {
      this.refused++;
      return Promise.reject(overloaded(retryAfterSeconds(expectedMs)));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => leave(overloaded(retryAfterSeconds(Math.max(this.expectedWaitMs(), this.options.maxWaitMs)))),
        this.options.maxWaitMs,
      );
      const onAbort = () => leave(overloaded(1));
      const waiter: Waiter = {
        start: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(this.start());
        },
        refuse: reject,
      };
      const leave = (error: AppError) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const waiting = this.queues.get(tenant);
        const at = waiting?.indexOf(waiter) ?? -1;
        if (waiting === undefined || at === -1) return;
        waiting.splice(at, 1);
        if (waiting.length === 0) this.queues.delete(tenant);
        this.queued--;
        this.refused++;
        reject(error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
      this.queues.set(tenant, queue);
      this.queued++;
    });
  }

  /**
   * A slot now or nothing, never a wait in a queue: for background work (document ingestion) that yields to requests.
   * Undefined while requests are waiting or every usable slot is taken; the caller tries again later.
   */
  tryAcquire(): (() => void) | undefined {
    if (this.queued > 0 || this.inFlight >= this.capacity) return undefined;
    return this.start(false);
  }

  stats(): AdmissionStats {
    return {
      inFlight: this.inFlight,
      queued: this.queued,
      admitted: this.admitted,
      refused: this.refused,
      loopDelayMs: this.loopDelayMs,
      serviceMs: this.serviceMs,
    };
  }

  /**
   * How long a request arriving now would wait: everyone queued ahead of it, plus itself, released at the rate the
   * usable slots turn over (capacity per average service time). 0 before any request finished (nothing to go by; the
   * wait timer still bounds it).
   */
  private expectedWaitMs(): number {
    if (this.serviceMs === undefined) return 0;
    return ((this.queued + 1) * this.serviceMs) / this.capacity;
  }

  close(): void {
    clearInterval(this.sampler);
    this.histogram.disable();
    for (const queue of this.queues.values()) for (const waiter of queue) waiter.refuse(overloaded(1));
    this.queues.clear();
    this.queued = 0;
  }

  /** `measured`: whether its time counts in the service-time average (background work is not what requests wait on). */
  private start(measured = true): () => void {
    this.inFlight++;
    this.admitted++;
    const startedAt = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (measured) {
        const tookMs = performance.now() - startedAt;
        this.serviceMs =
          this.serviceMs === undefined ? tookMs : this.serviceMs + SERVICE_SMOOTHING * (tookMs - this.serviceMs);
      }
      this.inFlight--;
      this.dispatch();
    };
  }

  /** Starts waiting requests while there is room, one tenant at a time in turn. */
  private dispatch(): void {
    while (this.queued > 0 && this.inFlight < this.capacity) {
      const [tenant, queue] = this.queues.entries().next().value as [string, Waiter[]];
      const waiter = queue.shift()!;
      this.queues.delete(tenant);
      if (queue.length > 0) this.queues.set(tenant, queue); // to the back of the round
      this.queued--;
      waiter.start();
    }
  }
}

/** An instance's admission pools, built from its config and closed when it stops. */
export interface AdmissionPools {
  /** Chat turns and document writes; the ingestion worker takes a slot only when one is free (tryAcquire). */
  work: Admission;
  /** Voice mints: short, many at once in a burst, each bounded by the provider's start, so a pool of their own. */
  mints: Admission;
  close(): void;
}

export function admissionPools(config: {
  ADMISSION_MAX_IN_FLIGHT: number;
  ADMISSION_QUEUE_PER_TENANT: number;
  ADMISSION_QUEUE_WAIT_MS: number;
  ADMISSION_LOOP_DELAY_MS: number;
  ADMISSION_MINT_MAX_IN_FLIGHT: number;
  ADMISSION_MINT_QUEUE_PER_TENANT: number;
  ADMISSION_MINT_QUEUE_WAIT_MS: number;
}): AdmissionPools {
  const work = new Admission({
    maxInFlight: config.ADMISSION_MAX_IN_FLIGHT,
    maxQueuedPerTenant: config.ADMISSION_QUEUE_PER_TENANT,
    maxWaitMs: config.ADMISSION_QUEUE_WAIT_MS,
    loopDelayLimitMs: config.ADMISSION_LOOP_DELAY_MS,
  });
  const mints = new Admission({
    maxInFlight: config.ADMISSION_MINT_MAX_IN_FLIGHT,
    maxQueuedPerTenant: config.ADMISSION_MINT_QUEUE_PER_TENANT,
    maxWaitMs: config.ADMISSION_MINT_QUEUE_WAIT_MS,
    loopDelayLimitMs: config.ADMISSION_LOOP_DELAY_MS,
  });
  return {
    work,
    mints,
    close: () => {
      work.close();
      mints.close();
    },
  };
}

/**
 * The tenant a request waits as: its account (API keys, dashboard sessions), or for keyless visitors the assistant
 * they reach (visitors are many and anonymous; one assistant's widget traffic is one owner's load).
 */
export function tenantOf(principal: { kind: string; accountId?: string }, assistantId: string | undefined): string {
  if (principal.kind === 'keyless' || principal.accountId === undefined) return `assistant:${assistantId ?? ''}`;
  return `account:${principal.accountId}`;
}

/** Runs `work` holding a slot of `admission` for `tenant` (none: at once); the slot is given back however it ends. */
export async function withAdmission<T>(
  admission: Admission | undefined,
  tenant: string,
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const release = admission ? await admission.acquire(tenant, signal) : undefined;
  try {
    return await work();
  } finally {
    release?.();
  }
}
