import { randomBytes } from 'node:crypto';
import { getAssistantById, type Assistant } from '../assistants/index.js';
import { createPollLoop } from '../jobs/poll-loop.js';
import * as q from './queries.js';
import { enqueueEnded, runJob, type AnalysisServiceDeps } from './service.js';
import { AnalysisAbandoned } from './steps.js';

export interface AnalysisWorkerOptions {
  /** Idle poll interval (work queued elsewhere). Default 1000 ms. */
  pollMs?: number;
  /** How often settled calls are looked for. Default 1000 ms. */
  voiceSweepMs?: number;
  /** How often idle chats are looked for. Default 10 s. */
  chatSweepMs?: number;
  /** How long a claim holds before another instance may take it over. Default 10 minutes. */
  leaseMs?: number;
}

export interface AnalysisWorker {
  start(): void;
  /** Stops claiming; the analysis in hand is given back to the queue (any instance takes it again). */
  stop(): Promise<void>;
  kick(): void;
}

/** Candidates one sweep looks at. */
const SWEEP_LIMIT = 200;
/** Calls settled this long before the last sweep are looked at again (a settlement that committed late). */
const VOICE_OVERLAP_MS = 5 * 60_000;
/** A fresh instance looks this far back for settled calls nobody queued (an instance died between the two). */
const VOICE_LOOKBACK_MS = 24 * 3_600_000;

/**
 * The analysis queue's worker (a lifecycle item): sweeps for conversations that ended (calls settled, chats gone
 * idle) and queues them, then claims one pending analysis at a time with FOR UPDATE SKIP LOCKED under a lease.
 */
export function createAnalysisWorker(deps: AnalysisServiceDeps, options: AnalysisWorkerOptions = {}): AnalysisWorker {
  const { sql, log } = deps;
  const voiceSweepMs = options.voiceSweepMs ?? 1000;
  const chatSweepMs = options.chatSweepMs ?? 10_000;
  const leaseMs = options.leaseMs ?? 10 * 60_000;
  let voiceSince = new Date(Date.now() - VOICE_LOOKBACK_MS);
  let nextVoiceSweep = 0;
  let nextChatSweep = 0;

  async function queueAll(candidates: q.Candidate[]): Promise<number> {
    const assistants = new Map<string, Promise<Assistant | undefined>>();
    const assistantOf = (id: string) => {
      let found = assistants.get(id);
      if (!found) assistants.set(id, (found = getAssistantById(sql, id)));
      return found;
    };
    let queued = 0;
    for (const c of candidates) if (await enqueueEnded(sql, c, assistantOf)) queued++;
    return queued;
  }

  async function sweep(): Promise<number> {
    const now = Date.now();
    let queued = 0;
    if (now >= nextVoiceSweep) {
      nextVoiceSweep = now + voiceSweepMs;
      const calls = await q.settledCallsSince(sql, voiceSince, SWEEP_LIMIT);
      queued += await queueAll(calls);
      voiceSince = calls.length === SWEEP_LIMIT ? calls.at(-1)!.endedAt : new Date(now - VOICE_OVERLAP_MS);
    }
    if (now >= nextChatSweep) {
      nextChatSweep = now + chatSweepMs;
      queued += await queueAll(await q.idleChats(sql, SWEEP_LIMIT));
    }
    return queued;
  }

  async function runOnce(): Promise<boolean> {
    const queued = await sweep();
    const token = randomBytes(12).toString('base64url');
    const job = await q.claimNext(sql, token, leaseMs);
    if (!job) return queued > 0;
    try {
      await runJob(deps, job, token, loop.signal);
    } catch (err) {
      if (err instanceof AnalysisAbandoned || loop.signal.aborted) {
        await q.release(sql, job.conversationId, token).catch(() => undefined);
        return false;
      }
      // Left leased: claimed again once the lease runs out, stored as failed after MAX_ATTEMPTS.
      log.error({ err, conversationId: job.conversationId }, 'conversation analysis failed');
    }
    return true;
  }

  const loop = createPollLoop({ name: 'analysis worker', pollMs: options.pollMs ?? 1000, log, runOnce });
  return { start: () => loop.start(), stop: () => loop.stop(), kick: () => loop.kick() };
}
