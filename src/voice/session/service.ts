import { systemClock, type VoiceClock } from '../../providers/voice/index.js';
import { isAppError } from '../../errors/index.js';
import { createWidgetPolicy } from '../../widget/index.js';
import type { VoiceContext, VoiceOptions, VoiceServiceDeps } from './context.js';
import {
  endSession,
  heartbeat,
  localForMedia,
  locateForMedia,
  openGate,
  type EndCaller,
  type GateOpening,
  type HeartbeatAnswer,
} from './control.js';
import { VoiceFleet } from './fleet.js';
import type { LiveVoiceSession } from './live-session.js';
import type { VoiceObserver } from './observer.js';
import { mintSession, type MintCaller, type MintInput, type MintResult } from './mint.js';
import { OWNERSHIP_DEFAULTS, VoiceOwnership } from './ownership.js';
import { noVoiceQuota } from './quota.js';
import type { VoiceRecordings } from '../recording/recordings.js';
import {
  joinedConnections,
  type CallerConnections,
  type CallerTransport,
  type DirectMediaTransport,
} from './transport.js';
import { finishSession, type EndAnswer } from './settlement.js';
import { Supervisor } from './supervisor.js';
import { VoiceTakeover } from './takeover.js';
import { VoiceTurns } from './turns.js';
import { TimelineWriter } from '../timeline/writer.js';

export { HEARTBEAT_LOSS_MS, TOMBSTONE_TTL_MS, type VoiceOptions, type VoiceServiceDeps } from './context.js';
export type { EndCaller, GateOpening, HeartbeatAnswer } from './control.js';
export type { MintCaller, MintInput, MintResult } from './mint.js';
export type { EndAnswer } from './settlement.js';

/**
 * The voice session control plane of one instance: the in-memory registry of the sessions it owns, their
 * supervision (one timer) and their ownership records (one renewal loop). The work lives by concern:
 * `mint.ts` (admission), `control.ts` (heartbeat, gate, media lookup, end), `settlement.ts` (teardown, orphans,
 * tombstones), `fleet.ts` (renewal and the orphan sweep), `turns.ts` (transcripts and grounding).
 * Background work starts with start() and stops with stop() (the app lifecycle), never at construction.
 */
export class VoiceService {
  readonly sessions = new Map<string, LiveVoiceSession>();
  /** Every caller transport's connections on this instance (set by voiceCapability). Tests and metrics read them. */
  media: CallerConnections | undefined;
  recordings: VoiceRecordings | undefined;
  readonly supervisor: Supervisor;
  readonly ownership: VoiceOwnership;
  /** The calls' timelines: written every few seconds and once settled; read live by the timeline route. */
  readonly timelines: TimelineWriter;
  private readonly ctx: VoiceContext;
  private readonly fleet: VoiceFleet;
  private readonly takeover: VoiceTakeover;
  private readonly observer: VoiceObserver | undefined;

  constructor(deps: VoiceServiceDeps, options: VoiceOptions = {}) {
    const clock: VoiceClock = options.clock ?? systemClock;
    this.observer = options.observer;
    this.supervisor = new Supervisor(clock);
    this.ownership = new VoiceOwnership(deps.store, deps.config.instanceId, {
      ...OWNERSHIP_DEFAULTS,
      ...options.ownership,
    });
    const quota = options.quota ?? noVoiceQuota;
    const turns = new VoiceTurns(deps);
    this.timelines = new TimelineWriter(deps.sql, deps.log.child({ component: 'voice-timelines' }));
    const ctx: VoiceContext = {
      deps,
      sessions: this.sessions,
      supervisor: this.supervisor,
      ownership: this.ownership,
      quota,
      keyless: options.keylessPolicy ?? createWidgetPolicy(deps),
      clock,
      limits: {
        mediaGraceMs: 15_000,
        // At least once per heartbeat interval: a spent budget ends the call within one (the hard stop).
        quotaCheckEveryMs: Math.min(10_000, deps.config.VOICE_HEARTBEAT_INTERVAL_MS),
        joinTimeoutMs: deps.config.VOICE_JOIN_TIMEOUT_SECONDS * 1000,
        ...options.limits,
      },
      environment: {
        now: () => clock.now(),
        end: async (session, reason, by) => {
          // A mint that failed after its provider session started tears that down too: never a session, not counted.
          const registered = ctx.sessions.has(session.id);
          session.timeline.record('ended', { reason: reason ?? 'client', by });
          const final = await finishSession(ctx, turns, session, reason, by);
          session.timeline.record('settled', { status: final.status, billableSeconds: final.billableSeconds });
          ctx.timelines.finish(session.id);
          // `lost`: another instance settled it (and counted it).
          if (registered && final.status === 'ended')
            this.observer?.sessionEnded(final.endReason ?? 'client', session.providerSession?.stats.reconnects ?? 0);
          return final;
        },
        ground: (session, request, question) => void turns.ground(session, request, question),
        writeTurn: (session, turn) => turns.write(session, turn),
        extendQuota: (session, used) => quota.extend(session.quotaRequest, used),
      },
      draining: false,
      transport: undefined,
      transports: new Map(),
      timelines: this.timelines,
      turns,
      direct: undefined,
      observer: options.observer,
      onSessionStored: options.onSessionStored,
      tools: options.tools,
      transferPhoneCall: options.transferPhoneCall,
      settling: new Map(),
      sharedStateDegraded: () => this.fleet.degraded,
      takeOver: (id) => this.takeover.takeOver(id),
    };
    this.ctx = ctx;
    this.fleet = new VoiceFleet(ctx, options.orphanSweepEveryMs ?? 30_000);
    this.takeover = new VoiceTakeover(ctx);
  }

  /**
   * A way callers reach this instance's calls: what the mint answers under `stream`, and its connections. The first
   * attached is the default; a mint that names another (`MintInput.transport`) gets that one's stream.
   */
  attachTransport(transport: CallerTransport): void {
    this.ctx.transport ??= transport;
    this.ctx.transports.set(transport.name, transport);
    this.media = joinedConnections([...this.ctx.transports.values()].map((t) => t.connections));
  }

  /** The transport of calls whose audio goes straight to the provider (WebRTC). */
  attachDirectTransport(transport: DirectMediaTransport): void {
    this.ctx.direct = transport;
  }

  get instanceId(): string {
    return this.ownership.instanceId;
  }

  // ---- lifecycle ------------------------------------------------------------------------------------------

  /** Start supervision, ownership renewal and the orphan sweep (on listen). */
  start(): void {
    this.ctx.draining = false;
    this.supervisor.start();
    this.fleet.start();
    this.takeover.start();
    this.timelines.start();
  }

  /**
   * SIGTERM, first step: refuse new mints (VOICE_DRAINING; the proxy already stops sending them, readiness is 503)
   * and let the calls this instance runs go on until they end or `timeoutMs` passes. stop() ends the rest.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.ctx.draining = true;
    const deadline = Date.now() + timeoutMs;
    while (this.sessions.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, deadline - Date.now())));
    }
  }

  /** Refusing new mints (drain() or stop() began). */
  get draining(): boolean {
    return this.ctx.draining;
  }

  /** Last step of a drain: refuse new mints, end every session left with `shutdown` (settled, tombstoned), stop the loops. */
  async stop(): Promise<void> {
    this.ctx.draining = true;
    await Promise.allSettled([...this.sessions.values()].map((s) => s.end('shutdown')));
    this.supervisor.stop();
    this.fleet.stop();
    this.takeover.stop();
    await this.timelines.stop();
  }

  // ---- the routes' operations -----------------------------------------------------------------------------

  async mint(input: MintInput, caller: MintCaller): Promise<MintResult> {
    const { observer } = this;
    if (observer === undefined) return mintSession(this.ctx, input, caller);
    try {
      const minted = await mintSession(this.ctx, input, caller);
      observer.mint('ok', 'ok');
      this.sessions.get(minted.sessionId)?.subscribe({ onGate: (d) => observer.gate(d.state, d.reason) });
      return minted;
    } catch (err) {
      observer.mint(
        isAppError(err) && err.status < 500 ? 'refused' : 'failed',
        isAppError(err) ? err.code : 'INTERNAL',
      );
      throw err;
    }
  }

  heartbeat(id: string, token: string): Promise<HeartbeatAnswer> {
    const { observer } = this;
    if (observer === undefined) return heartbeat(this.ctx, id, token);
    return heartbeat(this.ctx, id, token).then(
      (answer) => (observer.heartbeat(answer.status), answer),
      (err: unknown) => {
        observer.heartbeat(isAppError(err) ? err.code : 'INTERNAL');
        throw err;
      },
    );
  }

  /** The media socket's upgrade: the session must run here (else 421 misrouted, before upgrading) and be active. */
  locateForMedia(id: string, token: string): Promise<LiveVoiceSession> {
    return locateForMedia(this.ctx, id, token);
  }

  /** The media socket's session when it lives here, decided without waiting (see localForMedia). */
  localForMedia(id: string, token: string): LiveVoiceSession | undefined {
    return localForMedia(this.ctx, id, token);
  }

  openGate(id: string, token: string): Promise<GateOpening> {
    return openGate(this.ctx, id, token);
  }

  /** End by the caller (endReason null), or the final answer of a session that already ended (5 minutes). */
  end(id: string, caller: EndCaller): Promise<EndAnswer> {
    return endSession(this.ctx, id, caller);
  }

  // ---- the fleet (wall time) --------------------------------------------------------------------------------

  /**
   * One pass for every owned session: renew the records (store) and, independently, persist liveness and usage and
   * retry deferred settlements (database). Neither waits for the other.
   */
  async renewAll(): Promise<void> {
    await Promise.all([this.fleet.renewAll(), this.fleet.persistLiveness()]);
  }

  /** This instance cannot reach its shared state (store or database) right now. */
  get degraded(): boolean {
    return this.fleet.degraded;
  }

  /** Settlements waiting for the database. */
  get pendingSettlements(): number {
    return this.ctx.settling.size;
  }

  /**
   * Entries every per-call structure of this instance holds (tests: all 0 once every call ended or went elsewhere).
   */
  callStateCounts(): Record<string, number> {
    const quota = this.ctx.quota as { localCalls?: number; heldCalls?: number };
    return {
      sessions: this.sessions.size,
      supervised: this.supervisor.size,
      settling: this.ctx.settling.size,
      timelines: this.timelines.size,
      turns: this.ctx.turns.size,
      quotaLocal: quota.localCalls ?? 0,
      quotaChains: quota.heldCalls ?? 0,
      callerConnections: this.media?.relays.size ?? 0,
    };
  }

  /** Settle sessions whose owner stopped renewing and whose record has expired (the owner died). */
  sweepOrphans(): Promise<number> {
    return this.fleet.sweepOrphans();
  }
}
