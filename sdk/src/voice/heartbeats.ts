import type { ParleyClient } from '../client.js';
import { ParleyError } from '../errors.js';
import type { HeartbeatResponse, MintResponse } from './types.js';

export interface HeartbeatEvents {
  /** An answer. Returns false when supervision is over (ended / lost): no further beat is scheduled. */
  answer(answer: HeartbeatResponse): boolean;
  /** A beat failed (network, 429, 5xx); the next one follows. */
  failed(): void;
  /** The session is unknown (404: over for long, or never ours): nothing left to supervise. */
  unknown(): void;
  finished(): boolean;
}

/**
 * Heartbeats (POST .../heartbeat): one timer, the next beat after the answer's `nextHeartbeatMs` (shorter while
 * degraded), or after Retry-After when told to slow down.
 */
export class Heartbeats {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: ParleyClient,
    private readonly minted: MintResponse,
    private readonly signal: AbortSignal,
    private readonly on: HeartbeatEvents,
  ) {}

  schedule(afterMs: number | undefined): void {
    if (afterMs === undefined || this.on.finished()) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.beat(), afterMs);
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private async beat(): Promise<void> {
    const minted = this.minted;
    let next = minted.heartbeatIntervalMs;
    try {
      const answer: HeartbeatResponse = await this.client.POST('/api/v1/voice/sessions/{sessionId}/heartbeat', {
        params: { path: { sessionId: minted.sessionId } },
        body: { token: minted.controlToken },
        signal: this.signal,
      });
      if (this.on.finished()) return;
      if (!this.on.answer(answer)) return;
      next = answer.nextHeartbeatMs ?? next;
    } catch (err) {
      if (this.on.finished() || this.signal.aborted) return;
      this.on.failed();
      if (err instanceof ParleyError && err.status === 404) {
        this.on.unknown();
        return;
      }
      if (err instanceof ParleyError && err.retryAfterMs !== undefined) next = Math.max(next ?? 0, err.retryAfterMs);
    }
    this.schedule(next);
  }
}
