import { randomBytes } from 'node:crypto';
import { createPollLoop } from '../jobs/poll-loop.js';
import { getAssistantById } from '../assistants/index.js';
import { isUsageRefusal } from '../metering/index.js';
import { EvalErrorCodes } from './errors.js';
import * as q from './queries.js';
import { runCase, selectProvider, type EvalDeps } from './service.js';

export interface EvalRunnerOptions {
  /** Idle poll interval (evals queued on other instances, expired leases). Default 1000 ms. */
  pollMs?: number;
  /** How long a claim holds before another runner may take the eval over. Default 60 s; renewed while running. */
  leaseMs?: number;
}

/** A background loop; the app starts it on listen and stops it on close (never at import or route build). */
export interface EvalRunner {
  start(): void;
  /** Stops claiming, aborts the running case, puts its eval back to queued, waits for the loop. */
  stop(): Promise<void>;
  /** Wake the loop now (an eval was just queued on this instance). */
  kick(): void;
  /** Claims and runs at most one eval to its end (or interruption); resolves whether one was found. For tests and the loop. */
  runOnce(): Promise<boolean>;
}

/**
 * The eval runner: one eval at a time, its cases in order. Durable through Postgres alone: a claim is a lease
 * (FOR UPDATE SKIP LOCKED, renewed every third of the lease), so an eval left `running` by a dead instance is
 * claimed again once its lease expires and resumes at its first unfinished case; finished cases are never re-run.
 */
export function createEvalRunner(deps: EvalDeps, options: EvalRunnerOptions = {}): EvalRunner {
  const { sql, log } = deps;
  const pollMs = options.pollMs ?? 1000;
  const leaseMs = options.leaseMs ?? 60_000;

  async function runOnce(): Promise<boolean> {
    const token = randomBytes(12).toString('base64url');
    const claimed = await q.claimEval(sql, token, leaseMs);
    if (!claimed) return false;
    const evalLog = log.child({ evalId: claimed.id, attempt: claimed.attempts });
    const fail = async (errorCode: string, error: string) => {
      await q.finishEval(sql, claimed.id, token, { status: 'failed', errorCode, error });
      evalLog.warn({ errorCode }, 'eval failed');
    };
    if (claimed.attempts > claimed.maxAttempts) {
      await fail(EvalErrorCodes.INTERRUPTED, `The eval was interrupted ${claimed.maxAttempts} times and was given up.`);
      return true;
    }
    const assistant = await getAssistantById(sql, claimed.assistantId);
    if (!assistant) {
      await fail(EvalErrorCodes.ASSISTANT_GONE, 'The assistant no longer exists.');
      return true;
    }
    const { name, provider } = selectProvider(deps.providers, assistant);
    if (!provider) {
      await fail(
        EvalErrorCodes.PROVIDER_NOT_CONFIGURED,
        `The chat provider "${name}" is not configured on this deployment.`,
      );
      return true;
    }

    const controller = new AbortController();
    const onStop = () => controller.abort();
    loop.signal.addEventListener('abort', onStop, { once: true });
    const renew = setInterval(
      () => {
        q.renewLease(sql, claimed.id, token, leaseMs)
          .then((held) => {
            if (!held) controller.abort(); // claimed by another runner after our lease lapsed: stop wasting work
          })
          .catch((err: unknown) => evalLog.warn({ err }, 'eval lease renewal failed'));
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    const started = Date.now();
    try {
      const cases = await q.pendingCases(sql, claimed.id);
      for (const c of cases) {
        if (controller.signal.aborted) break;
        const result = await runCase(
          deps,
          { evalId: claimed.id, leaseToken: token, assistant, provider, signal: controller.signal },
          c,
        );
        if (result === 'lost') {
          evalLog.info('eval taken over by another runner');
          return true;
        }
        if (result === 'interrupted') break;
      }
      if (controller.signal.aborted) {
        if (loop.signal.aborted && (await q.requeueEval(sql, claimed.id, token)))
          evalLog.info('eval interrupted by shutdown; it will be resumed');
        return true;
      }
      if (await q.finishEval(sql, claimed.id, token, { status: 'done' }))
        evalLog.info({ cases: cases.length, durationMs: Date.now() - started }, 'eval done');
    } catch (err) {
      if (isUsageRefusal(err)) {
        // Enforce mode: the budget ran out (or the plan or account changed) mid-run. Finished cases keep their results.
        await fail(EvalErrorCodes.USAGE_REFUSED, `Stopped: ${(err as Error).message}`);
      } else if (loop.signal.aborted) {
        await q
          .requeueEval(sql, claimed.id, token)
          .catch((requeueErr: unknown) => evalLog.warn({ err: requeueErr }, 'could not requeue the eval'));
      } else {
        // Left running: the lease lapses and a runner resumes it (attempts bound the retries).
        evalLog.error({ err }, 'eval run failed unexpectedly');
      }
    } finally {
      clearInterval(renew);
      loop.signal.removeEventListener('abort', onStop);
    }
    return true;
  }

  const loop = createPollLoop({ name: 'eval runner', pollMs, log, runOnce });

  return {
    start: () => loop.start(),
    stop: () => loop.stop(),
    kick: () => loop.kick(),
    runOnce,
  };
}
