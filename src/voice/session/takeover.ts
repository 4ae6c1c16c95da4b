import { getAssistantById } from '../../assistants/index.js';
import { DEFAULT_AUDIO_FORMAT } from '../../providers/voice/index.js';
import { CallTimeline } from '../timeline/call-timeline.js';
import { findTimeline } from '../timeline/queries.js';
import { handlersWithTimeline, watchTimeline } from '../timeline/watch.js';
import * as q from '../queries.js';
import { keylessSource, type VoiceContext } from './context.js';
import { gateSeqBase } from './gate.js';
import { sessionLimits } from './limits.js';
import { LiveVoiceSession, type LiveSessionEnvironment } from './live-session.js';
import { PRESENCE_EVERY_MS } from './ownership.js';
import { releaseCall } from './teardown.js';

/**
 * A WebRTC call outlives the instance that minted it. Its audio runs between the caller and the provider, so when the
 * owner dies nothing the caller hears stops; only the supervision (the sideband) is gone. A survivor takes the call
 * over: the database moves the row to it at the next ownership generation (one survivor wins; a dead owner that comes
 * back is fenced), the ownership record is rewritten for that generation, the call is rebuilt from its row and the
 * sideband attached anew (the provider replays its recent events). Meanwhile heartbeats answer `degraded` (the link
 * is `reconnecting`), then `healthy`. Billing goes on from what the dead owner last persisted, settled once by the
 * survivor (fenced by the generation).
 *
 * Found two ways: a loop that every second asks which instances owning active calls are gone (their presence key
 * expired: 3 s after a kill), and any control request (heartbeat, gate, end) that reaches a survivor for a call whose
 * owner is gone. Only calls with a direct record (`voice:direct:<id>`, written at the mint) are taken over; a relayed
 * call's audio died with its owner and it is settled `lost` as before.
 */

const directKey = (id: string) => `voice:direct:${id}`;
/** Calls of one dead owner looked at per pass (the rest on the next pass), and taken over at once. */
const TAKEOVER_SCAN = 2000;
const TAKEOVER_BATCH = 100;
/** Stored turns a taken-over call compares the provider's replay with. */
const REPLAY_CHECK_TURNS = 6;

/** The mint of a WebRTC call: record its provider session so a survivor can take it over. */
export async function rememberDirect(
  ctx: VoiceContext,
  sessionId: string,
  providerSessionId: string,
  ttlMs: number,
): Promise<void> {
  await ctx.deps.store.set(directKey(sessionId), providerSessionId, { ttlMs });
}

export class VoiceTakeover {
  private readonly inFlight = new Map<string, Promise<boolean>>();
  private timer: NodeJS.Timeout | undefined;
  private scanning = false;
  /** Calls of dead owners found to be relayed (nothing to take over): the loop does not ask about them again. */
  private readonly relayed = new Set<string>();

  constructor(private readonly ctx: VoiceContext) {}

  start(): void {
    this.timer ??= setInterval(() => void this.scan(), PRESENCE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass: instances that own active calls and are gone; their WebRTC calls are taken over here. */
  async scan(): Promise<void> {
    const { ctx } = this;
    // The local voice holds no WebRTC calls: nothing to take over, no query.
    const provider = ctx.deps.voiceProvider;
    if (
      this.scanning ||
      ctx.direct === undefined ||
      ctx.draining ||
      provider === undefined ||
      provider.kind === 'local'
    )
      return;
    this.scanning = true;
    try {
      for (const owner of await q.activeOwnersBesides(ctx.deps.sql, ctx.ownership.instanceId)) {
        if (await ctx.ownership.ownerAlive({ instanceId: owner, generation: 0, expiresAt: 0 })) continue;
        const ids = (await q.activeSessionsOf(ctx.deps.sql, owner, TAKEOVER_SCAN)).filter(
          (id) => !this.relayed.has(id),
        );
        for (let i = 0; i < ids.length; i += TAKEOVER_BATCH)
          await Promise.all(ids.slice(i, i + TAKEOVER_BATCH).map((id) => this.takeOver(id)));
      }
    } catch (err) {
      ctx.deps.log.debug({ err: { message: (err as Error).message } }, 'voice takeover pass failed; next pass retries');
    } finally {
      this.scanning = false;
    }
  }

  /**
   * Take the call over when it is a WebRTC call whose owner is gone. Resolves true once the call runs here (its
   * sideband may still be attaching: the link says `reconnecting` until it is), false when it is not ours to take.
   */
  takeOver(id: string): Promise<boolean> {
    if (this.ctx.sessions.has(id)) return Promise.resolve(true);
    let running = this.inFlight.get(id);
    if (running === undefined) {
      running = this.run(id)
        .catch((err: unknown) => {
          this.ctx.deps.log.warn({ voiceSessionId: id, err: { message: (err as Error).message } }, 'takeover failed');
          return false;
        })
        .finally(() => this.inFlight.delete(id));
      this.inFlight.set(id, running);
    }
    return running;
  }

  private async run(id: string): Promise<boolean> {
    const { ctx } = this;
    const provider = ctx.deps.voiceProvider;
    const direct = ctx.direct;
    if (provider === undefined || direct === undefined || ctx.draining) return false;
    const providerSessionId = await ctx.deps.store.get(directKey(id));
    if (providerSessionId === null) {
      if (this.relayed.size >= 10_000) this.relayed.clear();
      this.relayed.add(id);
      return false;
    }
    const record = await ctx.ownership.read(id);
    if (record !== null && (await ctx.ownership.ownerAlive(record))) return false;
    const row = await q.findTakeoverRow(ctx.deps.sql, id);
    if (row === undefined || row.state !== 'active' || row.conversationId === null) return false;
    if (row.ownerInstance === ctx.ownership.instanceId) return false;
    // No record (a store that restarted empty): the owner may be alive and about to re-assert it.
    if (
      record === null &&
      (await ctx.ownership.ownerAlive({ instanceId: row.ownerInstance, generation: 0, expiresAt: 0 }))
    )
      return false;
    const assistant = await getAssistantById(ctx.deps.sql, row.assistantId);
    if (assistant === undefined) return false;
    const from = { ownerInstance: row.ownerInstance, generation: row.ownerGeneration };
    const generation = await q.takeOverSession(ctx.deps.sql, id, ctx.ownership.instanceId, from);
    if (generation === undefined) return false;
    const lease = await ctx.ownership.seize(id, generation);
    const stored = await q.recentTurns(ctx.deps.sql, row.conversationId, REPLAY_CHECK_TURNS).catch(() => []);
    const written = await findTimeline(ctx.deps.sql, row.accountId, id).catch(() => undefined);

    const startedAtMs = (row.startedAt ?? row.renewedAt).getTime();
    const sinceMint = Math.max(0, Date.now() - startedAtMs);
    const clockNow = ctx.clock.now();
    const log = ctx.deps.log.child({ voiceSessionId: id, assistantId: row.assistantId, source: row.source });
    const timeline = new CallTimeline(direct.name, resumedNow(sinceMint), startedAtMs);
    const session = new LiveVoiceSession(
      {
        id,
        accountId: row.accountId,
        assistant: { id: row.assistantId, language: assistant.settings.language },
        conversationId: row.conversationId,
        source: row.source,
        keyless: keylessSource(row.source),
        visitorId: row.visitorId,
        heartbeat: row.capabilities.includes('heartbeat'),
        recorded: row.recordingEnabled && row.recordingConsent,
        gateSeqFrom: gateSeqBase(generation),
        limits: sessionLimits(row.maxDurationSeconds, row.idleTimeoutSeconds, ctx.limits),
        startedAt: clockNow - sinceMint,
        audio: DEFAULT_AUDIO_FORMAT,
        log,
        timeline,
      },
      { ...ctx.environment, writeTurn: skipReplayed(ctx.environment.writeTurn, stored) },
    );
    // What the dead owner last wrote of the timeline (at most 5 s behind) comes first.
    if (written?.events != null)
      timeline.carryOn({
        events: written.events,
        eventsOmitted: written.eventsOmitted,
        turns: written.turns ?? [],
        turnsOmitted: written.turnsOmitted ?? 0,
      });
    watchTimeline(session);
    session.lease = lease;
    session.linkState = 'reconnecting';
    // Billed what the dead owner persisted, and the caller connected since (its audio never stopped).
    session.resume(row.usageSeconds, clockNow - Math.max(0, Date.now() - row.renewedAt.getTime()));
    timeline.record('taken_over', { from: row.ownerInstance, generation });
    // Its voice-minute grants become this instance's (renewed and settled here); without them it is settled from the
    // database's grants all the same.
    await ctx.quota
      .resume?.(session.quotaRequest)
      .catch((err: unknown) =>
        log.warn({ err: { message: (err as Error).message } }, 'taken-over call: its grants could not be read'),
      );
    ctx.sessions.set(id, session);
    ctx.timelines.track(id, row.accountId, row.assistantId, timeline);
    log.warn({ from: row.ownerInstance, generation }, 'voice call taken over from a dead instance');

    const handlers = { ...handlersWithTimeline(session), ...direct.watch(session, { present: true }) };
    void provider.resumeWebRtcSession(providerSessionId, { handlers, logger: log }).then(
      (sideband) => {
        session.providerSession = sideband;
        if (session.status !== 'active') return void sideband.close();
        ctx.supervisor.add(session);
        // The widget keeps the provider's audio muted while the gate is closed: the call was audible, so it stays so.
        session.gate.decide('social');
        timeline.record('provider_connected');
      },
      (err: unknown) => {
        log.warn({ err: { message: (err as Error).message } }, 'taken-over call: the sideband could not be attached');
        void session.end('control_lost');
      },
    );
    return true;
  }
}

/**
 * Another instance took this call over (its record names a later generation): let go without ending it (no hangup,
 * no settlement: the new owner settles it). A call whose row says it was settled instead ends as before.
 */
export async function relinquishOrEnd(ctx: VoiceContext, session: LiveVoiceSession): Promise<void> {
  const detach = (session.providerSession as { detach?: () => void } | undefined)?.detach;
  const row = detach === undefined ? undefined : await q.findSession(ctx.deps.sql, session.id).catch(() => undefined);
  if (detach === undefined || row?.state !== 'active' || row.ownerInstance === ctx.ownership.instanceId) {
    void session.end('control_lost');
    return;
  }
  session.log.warn({ owner: row.ownerInstance }, 'voice call taken over by another instance; letting go of it here');
  releaseCall(ctx, session, 'relinquished');
  detach.call(session.providerSession);
  session.status = 'ended';
  session.notifyEnded('control_lost');
}

/**
 * The provider replays its recent events after the attach: transcript lines the dead owner already stored come again.
 * The first turns of a taken-over call that an already stored turn of the same speaker contains are not stored twice;
 * the first new one ends the check. (What the dead owner had not stored yet is stored from the replay: no line lost
 * within the provider's replay.)
 */
function skipReplayed(
  write: LiveSessionEnvironment['writeTurn'],
  stored: { role: string; content: string }[],
): LiveSessionEnvironment['writeTurn'] {
  let checking = stored.length > 0;
  return (session, turn) => {
    if (checking && stored.some((m) => m.role === turn.role && m.content.includes(turn.text))) return;
    checking = false;
    write(session, turn);
  };
}

/** A monotonic clock whose first reading (the timeline's origin) lies `sinceMintMs` back: the call's times stay since its mint. */
function resumedNow(sinceMintMs: number): () => number {
  let first = true;
  return () => {
    const now = performance.now();
    if (!first) return now;
    first = false;
    return now - sinceMintMs;
  };
}
