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
