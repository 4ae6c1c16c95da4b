import { getAssistantById } from '../../assistants/index.js';
import type { Principal } from '../../auth/index.js';
import type { PolicyRequest } from '../../widget/index.js';
import { audienceOf, keylessSource, type VoiceContext } from './context.js';
import { verifyControlToken } from './control-token.js';
import { presentEndReason, type EndReason } from '../end-reasons.js';
import { voiceErrors } from '../errors.js';
import type { GateStream } from './gate.js';
import type { LiveVoiceSession } from './live-session.js';
import * as q from '../queries.js';
import { finalOfRow, present, readTombstone, settleOrphan, type EndAnswer } from './settlement.js';
import type { HeartbeatStatus, VoiceFinal } from '../types.js';

/**
 * Session control after the mint: heartbeat, the playback gate, the media socket's lookup, end. A session this
 * instance holds answers from memory; one owned elsewhere is 421 misrouted; one that is over answers its final
 * answer (tombstone or row), settling it as `lost` when its owner died.
 */

export interface HeartbeatAnswer {
  status: HeartbeatStatus;
  nextHeartbeatMs: number;
  endReason?: EndReason;
}

export type GateOpening = { kind: 'live'; stream: GateStream } | { kind: 'over'; lines: string[] };

export interface EndCaller {
  principal: Principal;
  visitorId: string | null;
  request: PolicyRequest;
}

const DEGRADED_HEARTBEAT_MS = 2000;

function checkToken(ctx: VoiceContext, id: string, token: string): void {
  if (!verifyControlToken(ctx.deps.config.secretKey, token, id, Date.now())) throw voiceErrors.notFound();
}

export async function heartbeat(ctx: VoiceContext, id: string, token: string): Promise<HeartbeatAnswer> {
  checkToken(ctx, id, token);
  const interval = ctx.deps.config.VOICE_HEARTBEAT_INTERVAL_MS;
  const live = ctx.sessions.get(id) ?? (await takenOver(ctx, id));
  if (live !== undefined) {
    if (live.status !== 'active') {
      return {
        status: 'ended',
        nextHeartbeatMs: interval,
        endReason: presentEndReason(live.endReason, audienceOf(live.keyless)),
      };
    }
    if (!live.heartbeat(ctx.clock.now())) throw voiceErrors.heartbeatTooFrequent();
    // Degraded: the provider link is reconnecting or silent, or this instance cannot reach its shared state (the call
    // goes on).
    if (live.linkState !== 'connected' || ctx.sharedStateDegraded()) {
      return { status: 'degraded', nextHeartbeatMs: Math.min(DEGRADED_HEARTBEAT_MS, interval) };
    }
    return { status: 'healthy', nextHeartbeatMs: interval };
  }
  const final = await finalElsewhere(ctx, id);
  return {
    status: final.status === 'lost' ? 'lost' : 'ended',
    nextHeartbeatMs: interval,
    endReason: presentEndReason(final.endReason, audienceOf(final.keyless)),
  };
}

/**
 * The media socket's upgrade: the control token must open the session, and the session must run here and be
 * active. Another instance's session is 421 misrouted (before upgrading); an unknown or finished one is 404.
 */
/**
 * The session a media socket may open, when it lives on this instance: decided without waiting (a bad token or an
 * ended session throws 404). Undefined when it does not live here: {@link locateForMedia} then asks the ownership
 * records where it runs (421) or says it does not (404).
 */
export function localForMedia(ctx: VoiceContext, id: string, token: string): LiveVoiceSession | undefined {
  checkToken(ctx, id, token);
  const live = ctx.sessions.get(id);
  if (live !== undefined && live.status !== 'active') throw voiceErrors.notFound();
  return live;
}

export async function locateForMedia(ctx: VoiceContext, id: string, token: string): Promise<LiveVoiceSession> {
  const live = localForMedia(ctx, id, token);
  if (live !== undefined) return live;
  await ownerElsewhere(ctx, id);
  throw voiceErrors.notFound();
}

export async function openGate(ctx: VoiceContext, id: string, token: string): Promise<GateOpening> {
  checkToken(ctx, id, token);
  const live = ctx.sessions.get(id) ?? (await takenOver(ctx, id));
  if (live !== undefined) {
    const stream = live.gate.open();
    if (stream === null) throw voiceErrors.gateStreamLimit(4);
    return { kind: 'live', stream };
  }
  const final = await finalElsewhere(ctx, id);
  return {
    kind: 'over',
    lines: [
      JSON.stringify({ type: 'gate', seq: 0, state: 'closed', reason: 'start', inputEndMs: null }) + '\n',
      JSON.stringify({ type: 'end', endReason: presentEndReason(final.endReason, audienceOf(final.keyless)) }) + '\n',
    ],
  };
}

/** End by the caller (endReason null), or the final answer of a session that already ended (5 minutes). */
export async function endSession(ctx: VoiceContext, id: string, caller: EndCaller): Promise<EndAnswer> {
  const live = ctx.sessions.get(id) ?? (await takenOver(ctx, id));
  if (live !== undefined) {
    await authorizeEnd(ctx, caller, {
      accountId: live.accountId,
      assistantId: live.assistant.id,
      keyless: live.keyless,
      visitorId: live.visitorId,
      live: true,
    });
    return present(await live.end(null, 'client'));
  }
  const ownerGone = await ownerElsewhere(ctx, id);
  const row = await q.findSession(ctx.deps.sql, id);
  if (row === undefined || row.state === 'failed') throw voiceErrors.notFound();
  await authorizeEnd(ctx, caller, {
    accountId: row.accountId,
    assistantId: row.assistantId,
    keyless: keylessSource(row.source),
    visitorId: row.visitorId,
  });
  const tomb = await readTombstone(ctx, id);
  if (tomb !== null) return present(tomb);
  if (row.state === 'active') {
    if (!ownerGone) ownerStillAlive(ctx, row);
    return present(await settleOrphan(ctx, row));
  }
  // Over for more than 5 minutes: the final answer is gone.
  throw voiceErrors.notFound();
}

async function authorizeEnd(
  ctx: VoiceContext,
  caller: EndCaller,
  s: { accountId: string; assistantId: string; keyless: boolean; visitorId: string | null; live?: boolean },
): Promise<void> {
  const p = caller.principal;
  if (p.kind !== 'keyless') {
    // An owner may end any session of the account (also widget ones); another account's is not found.
    if (p.accountId !== s.accountId) throw voiceErrors.notFound();
    return;
  }
  if (!s.keyless || (s.visitorId !== null && caller.visitorId !== s.visitorId)) throw voiceErrors.notFound();
  // A hang-up of a call this instance runs never waits on the database: when it does not answer, the session id and
  // the visitor already name the call (an Origin header proves nothing outside a browser), and the call ends now.
  const assistant = s.live
    ? await assistantIfAnswered(ctx, s.assistantId)
    : await getAssistantById(ctx.deps.sql, s.assistantId);
  if (assistant === null) return;
  if (assistant === undefined) throw voiceErrors.notFound();
  ctx.keyless.checkOrigin(caller.request, assistant);
}

/** How long a live call's hang-up waits for the assistant's settings before it ends the call without them. */
const END_LOOKUP_WAIT_MS = 250;

/** The assistant, or null when the database fails or does not answer within {@link END_LOOKUP_WAIT_MS}. */
async function assistantIfAnswered(ctx: VoiceContext, assistantId: string) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), END_LOOKUP_WAIT_MS)));
  const read = getAssistantById(ctx.deps.sql, assistantId).catch((err: unknown) => {
    if ((err as { status?: number }).status === 503) return null;
    throw err;
  });
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The state of a session this instance does not hold: 421 when its owner lives elsewhere; else its final answer
 * (tombstone, or the row), settling it as `lost` when it is still active with no owner (the owner died).
 */
async function finalElsewhere(ctx: VoiceContext, id: string): Promise<VoiceFinal> {
  const ownerGone = await ownerElsewhere(ctx, id);
  const tomb = await readTombstone(ctx, id);
  if (tomb !== null) return tomb;
  const row = await q.findSession(ctx.deps.sql, id);
  if (row === undefined || row.state === 'failed') throw voiceErrors.notFound();
  if (row.state === 'active') {
    if (!ownerGone) ownerStillAlive(ctx, row);
    return settleOrphan(ctx, row);
  }
  return finalOfRow(row);
}

/** A WebRTC call whose owner died, taken over here now (its sideband attaching), or undefined. */
async function takenOver(ctx: VoiceContext, id: string): Promise<LiveVoiceSession | undefined> {
  return (await ctx.takeOver(id)) ? ctx.sessions.get(id) : undefined;
}

/**
 * A session this instance does not hold: 421 when its record names another instance that is alive. Returns true when
 * the record names an instance that is gone (its presence expired: killed or lost), so the caller answers for the call
 * at once (settled `lost`) rather than sending clients to a dead owner until the record expires.
 */
async function ownerElsewhere(ctx: VoiceContext, id: string): Promise<boolean> {
  const record = await ctx.ownership.read(id);
  if (record === null || record.instanceId === ctx.ownership.instanceId) return false;
  if (await ctx.ownership.ownerAlive(record)) throw voiceErrors.misrouted(record.instanceId, record.expiresAt);
  return true;
}

/**
 * An active row without a store record is an orphan only when its owner has also stopped writing liveness: after a
 * store restart (records lost) the owner is alive and re-asserts its record within a renewal period. Until then the
 * caller is sent to the owner the row names (421), never told the call was lost.
 */
function ownerStillAlive(ctx: VoiceContext, row: q.VoiceSessionRow): void {
  if (row.ownerInstance === ctx.ownership.instanceId) return;
  const expiresAt = row.renewedAt.getTime() + ctx.ownership.timing.ttlMs;
  if (Date.now() < expiresAt) throw voiceErrors.misrouted(row.ownerInstance, expiresAt);
}
