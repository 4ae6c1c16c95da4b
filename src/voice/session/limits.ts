/** Supervision limits of one session, resolved at mint (assistant settings, capped by the deployment). */
export interface SessionLimits {
  /** 45 s: only enforced when the client declared `heartbeat`. */
  heartbeatLossMs: number;
  maxDurationMs: number;
  /** Spoken warning this long before the cap. */
  maxDurationWarningMs: number;
  idleTimeoutMs: number;
  /** Spoken check-in this long before the idle end. */
  idleCheckInMs: number;
  /** The media socket may be gone this long before the session ends `disconnected`. */
  mediaGraceMs: number;
  /**
   * A session whose media socket never connects ends `disconnected` this long after the mint, billed nothing
   * (VOICE_JOIN_TIMEOUT_SECONDS, default 15 s), so an abandoned mint does not run up a bill.
   */
  joinTimeoutMs: number;
  /** At most one heartbeat per this many ms. */
  heartbeatMinGapMs: number;
  /** How often the quota is asked whether the call may go on. */
  quotaCheckEveryMs: number;
}

/** A caller that declared `heartbeat` and sent none for this long is gone. */
export const HEARTBEAT_LOSS_MS = 45_000;

/**
 * The limits of a session from its assistant's caps (at mint, or when a survivor takes over a dead owner's call):
 * the spoken warnings come a tenth of the way (at most 30 s) before the duration cap and a third of the way (at most
 * 20 s) before the idle end; the rest are the deployment's (media grace, quota checks, join timeout).
 */
export function sessionLimits(
  maxDurationSeconds: number,
  idleTimeoutSeconds: number,
  deployment: Pick<SessionLimits, 'mediaGraceMs' | 'quotaCheckEveryMs' | 'joinTimeoutMs'>,
): SessionLimits {
  const maxDurationMs = maxDurationSeconds * 1000;
  const idleTimeoutMs = idleTimeoutSeconds * 1000;
  return {
    heartbeatLossMs: HEARTBEAT_LOSS_MS,
    maxDurationMs,
    maxDurationWarningMs: Math.min(30_000, Math.floor(maxDurationMs / 10)),
    idleTimeoutMs,
    idleCheckInMs: Math.min(20_000, Math.floor(idleTimeoutMs / 3)),
    heartbeatMinGapMs: 1000,
    ...deployment,
  };
}
