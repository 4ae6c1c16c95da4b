import type { ParleyClient } from '../client.js';
import { ParleyError } from '../errors.js';
import { abortableSleep } from '../sleep.js';
import { readNdjson } from '../streams.js';
import type { EndReason, GateDecision, GateLine, MintResponse } from './types.js';

export interface GateFollowerEvents {
  decision(line: GateDecision): void;
  /** The stream's end line: the service ended the call. */
  end(endReason: EndReason): void;
  /** The session is unknown here (404) or lives elsewhere (421): following stops. */
  error(err: ParleyError): void;
  /** True once the call is over: following stops. */
  finished(): boolean;
}

/**
 * Follows the NDJSON gate stream (POST .../gate) until the call ends; reopens it, with backoff, if it breaks while the
 * session lives (at most five tries in a row).
 */
export async function followGate(
  client: ParleyClient,
  minted: MintResponse,
  signal: AbortSignal,
  on: GateFollowerEvents,
): Promise<void> {
  for (let attempt = 0; !on.finished() && attempt < 5; attempt++) {
    try {
      const res = await client.stream('post', '/api/v1/voice/sessions/{sessionId}/gate', {
        params: { path: { sessionId: minted.sessionId } },
        body: { token: minted.controlToken },
        signal,
        headers: { accept: 'application/x-ndjson' },
      });
      if (res.body === null) return;
      attempt = 0;
      for await (const line of readNdjson<GateLine>(res.body)) {
        if (line.type === 'gate') on.decision(line);
        else if (line.type === 'end') {
          on.end(line.endReason ?? null);
          return;
        }
      }
    } catch (err) {
      if (on.finished() || signal.aborted) return;
      if (err instanceof ParleyError && (err.status === 404 || err.status === 421)) {
        on.error(err);
        return;
      }
    }
    if (on.finished()) return;
    try {
      await abortableSleep(250 * 2 ** attempt, signal);
    } catch {
      return;
    }
  }
}
