/**
 * The written retry policy for a dropped provider link (openai-node style: one place, stated plainly).
 *
 * - Only an unexpected drop is retried: a close code RFC 6455 marks as transient (1001 going away, 1005/1006 no
 *   status/abnormal, 1011 server error, 1012 restart, 1013 try later, 1015 TLS). The same list the openai SDK uses.
 * - Attempts back off exponentially from `initialDelayMs` to `maxDelayMs` with jitter (half to full delay), so a
 *   provider restart does not see hundreds of sessions reconnect in the same millisecond.
 * - All attempts fit inside `windowMs` from the drop; after that the link is lost.
 * - A fatal answer (401/403, quota, any other 4xx such as a refused resume, or an unconfirmed lock) stops at once.
 */
export function isRecoverableCloseCode(code: number): boolean {
  switch (code) {
    case 1001:
    case 1005:
    case 1006:
    case 1011:
    case 1012:
    case 1013:
    case 1015:
      return true;
    default:
      return false;
  }
}

export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  windowMs: number;
  /** 0..1; injected so tests can pin it. */
  random?: () => number;
}

/**
 * Delay before attempt number `attempt` (0-based), or undefined when the window is spent. The last attempt is
 * squeezed into the window's remainder rather than skipped.
 */
export function nextReconnectDelay(
  attempt: number,
  elapsedSinceDropMs: number,
  options: BackoffOptions,
): number | undefined {
  const remaining = options.windowMs - elapsedSinceDropMs;
  if (remaining <= 0) return undefined;
  const exponential = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.min(attempt, 20));
  const jitter = 0.5 + 0.5 * (options.random ?? Math.random)();
  return Math.min(remaining, Math.round(exponential * jitter));
}
