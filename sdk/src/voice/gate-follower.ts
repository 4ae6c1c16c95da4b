import type { ParleyClient } from '../client.js';
import { ParleyError } from '../errors.js';
import { abortableSleep } from '../sleep.js';
import { readNdjson } from '../streams.js';
import type { EndReason, GateDecision, GateLine, MintResponse } from './types.js';

export interface GateFollowerEvents {
  decision(line: GateDecision): void;
  /** The stream's end line: the service ended the call. */
  end(endReason: EndReason): void;
  /** The session is unknown (404): following stops. */
  error(err: ParleyError): void;
  /** True once the call is over: following stops. */
  finished(): boolean;
}

/** How long the gate stream may keep failing before following stops (the heartbeats still tell the call's fate). */
const REOPEN_FOR_MS = 20_000;

/**
 * Follows the NDJSON gate stream (POST .../gate) until the call ends; reopens it, with backoff (250 ms doubling to
 * 2 s), if it breaks while the session lives, for up to 20 s of failures in a row. A 421 is retried too: the
 * instance that answered does not hold the call yet, as while a survivor takes over a WebRTC call whose owner died
 * (until the dead owner's presence expires, a few seconds); the proxy sends the next try to whoever holds it.
 */
export async function followGate(
  client: ParleyClient,
  minted: MintResponse,
  signal: AbortSignal,
  on: GateFollowerEvents,
): Promise<void> {
  let failingSince: number | undefined;
  for (let attempt = 0; !on.finished(); attempt++) {
    try {
      const res = await client.stream('post', '/api/v1/voice/sessions/{sessionId}/gate', {
        params: { path: { sessionId: minted.sessionId } },
        body: { token: minted.controlToken },
        signal,
        headers: { accept: 'application/x-ndjson' },
      });
      if (res.body === null) return;
      attempt = 0;
      failingSince = undefined;
      for await (const line of readNdjson<GateLine>(res.body)) {
        if (line.type === 'gate') on.decision(line);
        else if (line.type === 'end') {
          on.end(line.endReason ?? null);
          return;
        }
      }
    } catch (err) {
      if (on.finished() || signal.aborted) return;
      if (err instanceof ParleyError && err.status === 404) {
        on.error(err);
        return;
      }
    }
    if (on.finished()) return;
    failingSince ??= Date.now();
    if (Date.now() - failingSince > REOPEN_FOR_MS) return;
    try {
      await abortableSleep(Math.min(2000, 250 * 2 ** attempt), signal);
    } catch {
      return;
    }
  }
}
