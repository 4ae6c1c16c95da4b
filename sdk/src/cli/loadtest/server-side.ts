import type { ParleyClient } from '../../client.js';
import { ParleyError } from '../../errors.js';
import { abortableSleep } from '../../sleep.js';
import { getVoiceTimeline } from '../../timeline.js';
import { Samples, type LatencySummary } from './stats.js';

/** Calls whose timelines are read after a run, at most (the first ones connected). */
export const SERVER_FIGURE_CALLS = 200;
const PARALLEL = 8;

/** What the service measured of the same calls (their timelines), beside what this tool heard. */
export interface ServerFigures {
  calls: number;
  turns: number;
  /** The caller's end of speech to the first answer audio the service wrote to the caller, ms. */
  turnLatencyMs: LatencySummary | null;
  /** The provider's share of each turn (its time to first audio), ms. */
  providerFirstAudioMs: LatencySummary | null;
  /** The service's own share of each turn (the parts owned by the relay), ms. */
  relayMs: LatencySummary | null;
  /** Why none could be read (e.g. the key lacks conversations:read); null when they were. */
  unavailable: string | null;
}

/** Reads the timelines of up to {@link SERVER_FIGURE_CALLS} calls (eight at a time) and sums up their turns. */
export async function serverFigures(client: ParleyClient, sessionIds: readonly string[]): Promise<ServerFigures> {
  const latency = new Samples();
  const provider = new Samples();
  const relay = new Samples();
  let calls = 0;
  let unavailable: string | null = null;
  const waited = { ms: 0 };
  const queue = sessionIds.slice(0, SERVER_FIGURE_CALLS);
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined && unavailable === null; id = queue.shift()) {
      const sessionId = id;
      try {
        // A key the run itself used up answers 429: wait as told, within a bound, rather than give up on the figures.
        const timeline = await retryAfterLimit(() => getVoiceTimeline(client, sessionId), waited);
        calls++;
        for (const turn of timeline.turns) {
          latency.add(turn.latencyMs);
          provider.add(turn.parts.find((p) => p.name === 'provider_first_audio')?.ms ?? 0);
          relay.add(turn.parts.filter((p) => p.owner === 'relay').reduce((n, p) => n + p.ms, 0));
        }
      } catch (err) {
        if (err instanceof ParleyError && (err.status === 401 || err.status === 403))
          unavailable = `the API key cannot read call timelines (${err.code}; it needs conversations:read)`;
        else if (!(err instanceof ParleyError && err.status === 404))
          unavailable = `timelines unreadable: ${String(err)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  const turnLatencyMs = latency.summary();
  return {
    calls,
    turns: turnLatencyMs?.count ?? 0,
    turnLatencyMs,
    providerFirstAudioMs: provider.summary(),
    relayMs: relay.summary(),
    unavailable,
  };
}

/** Longest a run waits in all for the API key's rate limit while reading timelines. */
const RATE_LIMIT_WAIT_BUDGET_MS = 30_000;

async function retryAfterLimit<T>(read: () => Promise<T>, waited: { ms: number }): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (err) {
      const wait = err instanceof ParleyError && err.status === 429 ? (err.retryAfterMs ?? 1000) : undefined;
      if (wait === undefined || waited.ms + wait > RATE_LIMIT_WAIT_BUDGET_MS) throw err;
      waited.ms += wait;
      await abortableSleep(wait);
    }
  }
}
