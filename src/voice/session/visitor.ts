import type { VoiceContext } from './context.js';
import * as q from '../queries.js';

/**
 * One widget visitor, one call: a visitor's newer mint supersedes the older call. The check (which call is the
 * visitor's) and the act (end it, then admit the new one) are one step per visitor across the fleet: a short lease in
 * the shared store is held from the supersede until the new call is registered under the visitor (or its mint
 * failed), so two mints of one visitor at the same moment run one after the other, the second superseding the first
 * before its concurrency check (neither is refused, one call stays live).
 */

const visitorKey = (assistantId: string, visitorId: string) => `voice:visitor:${assistantId}:${visitorId}`;
const lockKey = (assistantId: string, visitorId: string) => `voice:visitor-mint:${assistantId}:${visitorId}`;
/** Longer than a mint takes (the provider's start is bounded by its 3 s lock confirmation); a dead holder's lapses. */
const LOCK_TTL_MS = 20_000;
const LOCK_POLL_MS = 50;

/** Hold the visitor's mint lease while `work` runs (waiting, bounded, for another mint of the visitor to finish). */
export async function withVisitorMint<T>(
  ctx: VoiceContext,
  assistantId: string,
  visitorId: string,
  signal: AbortSignal,
  work: () => Promise<T>,
): Promise<T> {
  const key = lockKey(assistantId, visitorId);
  const holder = `${ctx.ownership.instanceId}:${Math.random().toString(36).slice(2)}`;
  const deadline = Date.now() + LOCK_TTL_MS;
  // Past the deadline the holder is presumed dead (its lease lapses by then): go on without it.
  let held = false;
  while (!signal.aborted && Date.now() < deadline) {
    if (await ctx.deps.store.set(key, holder, { ttlMs: LOCK_TTL_MS, onlyIfAbsent: true })) {
      held = true;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
  try {
    return await work();
  } finally {
    if (held) await ctx.deps.store.deleteIfEquals(key, holder).catch(() => undefined);
  }
}

/** The new call is the visitor's (read by the next mint's supersede). */
export async function rememberVisitorCall(
  ctx: VoiceContext,
  assistantId: string,
  visitorId: string,
  sessionId: string,
  ttlMs: number,
): Promise<void> {
  await ctx.deps.store.set(visitorKey(assistantId, visitorId), sessionId, { ttlMs });
}

/**
 * A newer widget session of the same visitor ends the older one (`superseded`), wherever it runs, and waits until
 * it is settled: admission comes next, and the older call must not hold the visitor's concurrency slot (a reload on a
 * plan with one concurrent call would otherwise be refused voice_unavailable).
 */
export async function supersedeVisitor(
  ctx: VoiceContext,
  assistantId: string,
  visitorId: string,
  signal: AbortSignal,
): Promise<void> {
  const olderId = await ctx.deps.store.get(visitorKey(assistantId, visitorId));
  if (olderId === null) return;
  const local = ctx.sessions.get(olderId);
  if (local !== undefined) {
    await local.end('superseded');
    return;
  }
  // Owned elsewhere: mark the record; the owner sees it on its next renewal and ends the session itself. Wait for
  // that (bounded: one renewal period and a margin) until its settlement is over: the row says it ended, then its
  // grants close (until they do, the plan's concurrent calls still count it). A dead owner's call is settled by the
  // orphan sweep instead.
  if ((await ctx.ownership.requestEnd(olderId, 'superseded')) === null) return;
  const deadline = Date.now() + ctx.ownership.timing.renewEveryMs + 5000;
  while (Date.now() < deadline && !signal.aborted) {
    const row = await q.findSession(ctx.deps.sql, olderId);
    if (row === undefined) return;
    if (row.state !== 'active' && !(await ctx.quota.holdsGrant?.(olderId))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
