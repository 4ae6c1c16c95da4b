import type { VoiceContext } from './context.js';
import type { LiveVoiceSession } from './live-session.js';

/**
 * What every ending of a call on this instance lets go of, in one place: supervision, its place under the
 * per-instance cap, and, when the call goes on elsewhere (relinquished to the instance that took it over), its grants,
 * transcript state, timeline and registry entry here (the new owner holds them). A call that ends here settles first
 * (settlement.ts) and then leaves the registry, its transcript state drained and its timeline written once more.
 */
export function releaseCall(ctx: VoiceContext, session: LiveVoiceSession, how: 'ending' | 'relinquished'): void {
  ctx.supervisor.delete(session);
  ctx.quota.ended?.(session.quotaRequest);
  if (how === 'ending') return;
  ctx.quota.forget?.(session.quotaRequest);
  ctx.turns.forget(session.id);
  ctx.timelines.forget(session.id);
  ctx.sessions.delete(session.id);
}
