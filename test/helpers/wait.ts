/** Waiting in tests: for a condition, never for a guessed number of milliseconds when the condition can be seen. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` (sync or async) until it returns a truthy value, and returns that value; fails the wait (throws) after
 * `timeoutMs` with `what` in the message. The bound is generous on purpose: it costs time only when the condition never
 * comes, and the suite runs six files at a time on two cores, where a background loop can be seconds late.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 15_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(15);
  }
}
