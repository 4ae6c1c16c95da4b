import type { Logger } from '../../log/index.js';
import {
  DEFAULT_AUDIO_FORMAT,
  type VoiceAudioFormat,
  type VoiceDelegationRequest,
  type VoiceLinkState,
  type VoiceSession,
  type VoiceSessionClosed,
  type VoiceSessionHandlers,
  type VoiceTranscriptDelta,
} from '../../providers/voice/index.js';
import type { EndReason } from '../end-reasons.js';
import { CallTimeline } from '../timeline/call-timeline.js';
import { BillableTime, wholeBillableSeconds } from './billable-time.js';
import { GateChannel, type GateDecision } from './gate.js';
import type { OwnerLease } from './ownership.js';
import type { VoiceQuotaRequest } from './quota.js';
import type { SessionLimits } from './limits.js';
import type { Supervised } from './supervisor.js';
import { TranscriptAssembler, type TranscriptTurn, type TurnSource } from './transcripts.js';
import type { VoiceFinal, VoiceSource } from '../types.js';

/**
 * What the relay (and tests) subscribe to: the provider's callbacks fanned out. Called synchronously from the
 * provider socket's message handler: do not block; output audio Buffers must not be kept past the call.
 */
export interface LiveSessionListener {
  onOutputAudio?(pcm: Buffer): void;
  onInputTranscript?(delta: VoiceTranscriptDelta): void;
  onOutputTranscript?(delta: VoiceTranscriptDelta): void;
  onLinkState?(state: VoiceLinkState): void;
  /** A new playback gate decision (the state follows from it). */
  onGate?(decision: Readonly<GateDecision>): void;
  /** The session is ending (reason as presented to this session's audience): close the media socket. */
  onEnded?(endReason: EndReason): void;
}

export interface LiveSessionInit {
  id: string;
  accountId: string;
  assistant: { id: string; language: string };
  conversationId: string;
  source: VoiceSource;
  keyless: boolean;
  visitorId: string | null;
  heartbeat: boolean;
  /** The call is recorded: the assistant records and the caller consented (no consent, no file). */
  recorded?: boolean;
  /** The gate's first seq (a call taken over from a dead owner continues above its decisions). Default 0. */
  gateSeqFrom?: number;
  limits: SessionLimits;
  startedAt: number;
  /** The call's audio both ways (PCM16 24 kHz when omitted): transports frame it, the pump and recording size by it. */
  audio?: VoiceAudioFormat;
  log: Logger;
  timeline?: CallTimeline;
}

/** What the session asks of the service (the I/O it must not do itself). */
export interface LiveSessionEnvironment {
  now(): number;
  /** Ends the session: provider close, settlement, tombstone, ownership release. Called once. */
  end(session: LiveVoiceSession, reason: EndReason, by: 'client' | 'service'): Promise<VoiceFinal>;
  /** Answer a delegated turn from the assistant's documents. */
  ground(session: LiveVoiceSession, request: VoiceDelegationRequest, question: string): void;
  writeTurn(session: LiveVoiceSession, turn: TranscriptTurn): void;
  /** Whether the call may go on (the quota seam); false ends it with usage_limit. */
  extendQuota(session: LiveVoiceSession, usedSeconds: number): Promise<boolean>;
}

export type LiveStatus = 'active' | 'ending' | 'ended';

/** Spoken by the model (as commentary) so the caller is never cut off without a word. */
const IDLE_CHECK_IN = 'Are you still there? I will hang up soon if I do not hear from you.';
const DURATION_WARNING = 'We are almost out of time for this call; it will end shortly.';

/**
 * One live voice session on its owning instance: the provider session, the gate, the supervision deadlines and
 * the listeners the media relay attaches. Everything here is in memory and synchronous; the service does the I/O.
 *
 * What transports and the pump use: `provider.sendAudio(pcm)` for caller audio, `gate.isOpen` before forwarding
 * assistant audio, `subscribe({...})` for output audio/transcripts/the end, `onMediaAttached()` /
 * `onMediaDetached()` when the caller's media socket opens/closes (a detach not followed by an attach within the
 * grace period ends the session `disconnected`).
 */
export class LiveVoiceSession implements Supervised {
  readonly id: string;
  readonly accountId: string;
  /** firstMessage: said once as the caller first connects (the owner's setting; a taken-over call has none). */
  readonly assistant: { id: string; language: string; firstMessage?: string | null };
  readonly conversationId: string;
  readonly source: VoiceSource;
  readonly keyless: boolean;
  readonly visitorId: string | null;
  readonly heartbeatDeclared: boolean;
  /** Both directions are written to a recording while the call runs (assistant records and consent given). */
  readonly recorded: boolean;
  readonly limits: SessionLimits;
  readonly startedAt: number;
  readonly audio: VoiceAudioFormat;
  readonly log: Logger;
  readonly gate: GateChannel;
  readonly timeline: CallTimeline;
  /** Set once the provider session started with the lock confirmed; a taken-over call's once its sideband attached. */
  providerSession: VoiceSession | undefined;
  lease!: OwnerLease;
  /** The transfer_call tool handed the call on: the carrier's stop then ends it `transferred`. */
  handedOff = false;
  status: LiveStatus = 'active';
  endReason: EndReason = null;
  linkState: VoiceLinkState = 'connected';
  usageSeconds = 0;
  /** The provider's own close (final usage), when it came before ours. */
  providerClosed: VoiceSessionClosed | undefined;
  private lastHeartbeatAt: number;
  private heartbeatsSeen = 0;
  private lastSpeechAt: number;
  private checkedIn = false;
  private warned = false;
  private mediaAttached = false;
  private mediaDetachedAt: number | undefined;
  /** The join and the unbilled stretches (caller away, link down; an overlap counted once). */
  private readonly billed = new BillableTime();
  /** Seconds billed before this instance took the call over from a dead owner (takeover.ts). */
  private carriedSeconds = 0;
  /** The last sign of life from the provider (usage update, transcript): where a silent link's silence began. */
  private lastProviderEventAt: number;
  /** Since when the provider link is down or silent (undefined: connected). */
  private linkDownSince: number | undefined;
  private lastQuotaCheckAt: number;
  private quotaCheckInFlight = false;
  private endPromise: Promise<VoiceFinal> | undefined;
  /** When the end began: billing stops here, however long closing the provider link takes. */
  private endedAt: number | undefined;
  /** When the provider's last usage figure arrived (its figure is as of then). */
  private usageAt: number;
  private readonly listeners = new Set<LiveSessionListener>();
  readonly transcripts: TranscriptAssembler;

  constructor(
    init: LiveSessionInit,
    private readonly env: LiveSessionEnvironment,
  ) {
    this.id = init.id;
    this.accountId = init.accountId;
    this.assistant = init.assistant;
    this.conversationId = init.conversationId;
    this.source = init.source;
    this.keyless = init.keyless;
    this.visitorId = init.visitorId;
    this.heartbeatDeclared = init.heartbeat;
    this.recorded = init.recorded === true;
    this.limits = init.limits;
    this.startedAt = init.startedAt;
    this.audio = init.audio ?? DEFAULT_AUDIO_FORMAT;
    this.lastHeartbeatAt = init.startedAt;
    this.lastSpeechAt = init.startedAt;
    this.lastQuotaCheckAt = init.startedAt;
    this.lastProviderEventAt = init.startedAt;
    this.usageAt = init.startedAt;
    this.log = init.log;
    this.timeline = init.timeline ?? new CallTimeline('websocket');
    this.gate = new GateChannel(
      env.now,
      (decision) => {
        for (const l of this.listeners) l.onGate?.(decision);
      },
      init.gateSeqFrom,
    );
    this.transcripts = new TranscriptAssembler((turn) => env.writeTurn(this, turn));
  }

  get quotaRequest(): VoiceQuotaRequest {
    return {
      accountId: this.accountId,
      sessionId: this.id,
      assistantId: this.assistant.id,
      source: this.source,
      keyless: this.keyless,
    };
  }

  /** Provider callbacks: internal bookkeeping first, then the listeners. Passed to startSession. */
  readonly handlers: VoiceSessionHandlers = {
    onOutputAudio: (pcm) => {
      for (const l of this.listeners) l.onOutputAudio?.(pcm);
    },
    onInputTranscript: (delta) => {
      // No speech events exist: visitor speech is inferred from input transcript fragments (the provider sends no speech events).
      this.lastSpeechAt = this.lastProviderEventAt = this.env.now();
      this.checkedIn = false;
      this.transcripts.add('user', delta.text, delta.startMs);
      if (this.status === 'active') this.gate.decide('user_speaking', delta.endMs);
      for (const l of this.listeners) l.onInputTranscript?.(delta);
    },
    onOutputTranscript: (delta) => {
      this.lastProviderEventAt = this.env.now();
      this.transcripts.add('assistant', delta.text);
      // A reply that follows the visitor's speech without a delegation is small talk; a grounded answer opened the
      // gate itself, and a pending one keeps it closed until the answer is handed over.
      const reason = this.gate.current.reason;
      if (this.status === 'active' && (reason === 'user_speaking' || reason === 'start')) this.gate.decide('social');
      for (const l of this.listeners) l.onOutputTranscript?.(delta);
    },
    onDelegation: (request) => {
      if (this.status !== 'active') return;
      this.gate.decide('pending_backend', this.gate.current.inputEndMs);
      // A Responses backend answers itself (with tools: tool-calls.ts); only a client delegation is Parley's to ground.
      if (request.target === 'client') this.env.ground(this, request, this.transcripts.pendingQuestion());
      this.transcripts.questionAsked(request.offsetMs);
    },
    onUsage: (usage) => {
      this.usageSeconds = usage.seconds;
      this.usageAt = this.env.now();
      if (this.linkDownSince === undefined) this.lastProviderEventAt = this.env.now();
    },
    onStateChange: (state) => {
      // A silent link is detected by the keepalive a few seconds late: its unbilled time starts at the last thing
      // the provider said, not at the detection (the silent time is not billed).
      const now = this.env.now();
      if (state === 'reconnecting' && this.linkDownSince === undefined) {
        this.linkDownSince = Math.min(now, Math.max(this.lastProviderEventAt, this.billed.joinedAt ?? now));
        this.billed.open(this.linkDownSince);
      }
      if (state === 'connected' && this.linkDownSince !== undefined) {
        this.linkDownSince = undefined;
        this.lastProviderEventAt = now;
        this.billed.close(now, this.mediaDetachedAt === undefined);
      }
      this.linkState = state;
      for (const l of this.listeners) l.onLinkState?.(state);
      // Reconnect window exhausted or refused: control of the call is gone.
      if (state === 'lost') void this.end('control_lost');
    },
    onError: (error) => {
      this.log.warn({ code: error.code, providerStatus: error.providerStatus }, 'voice provider error');
    },
    onClosed: (closed) => {
      this.providerClosed = closed;
      if (this.status === 'active') this.timeline.record('provider_closed', { reason: closed.reason });
      if (closed.usage.seconds !== this.usageSeconds) {
        this.usageSeconds = closed.usage.seconds;
        this.usageAt = this.env.now();
      }
      // The provider ended the call on its own (hang-up, expiry, lost link): our control of it is gone.
      if (this.status === 'active') void this.end('control_lost');
    },
  };

  /** The grounded answer was handed to the model: the assistant may speak it. */
  answerReady(sources: TurnSource[], outcome: 'answered' | 'no_answer'): void {
    this.transcripts.attachGrounding(sources, outcome);
    if (this.status === 'active') this.gate.decide('backend_answer', this.gate.current.inputEndMs);
  }

  subscribe(listener: LiveSessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onMediaAttached(): void {
    const now = this.env.now();
    const first = this.billed.joinedAt === undefined;
    this.billed.join(now);
    this.mediaAttached = true;
    this.mediaDetachedAt = undefined;
    this.billed.close(now, this.linkDownSince === undefined);
    this.timeline.record('caller_connected');
    if (first && this.assistant.firstMessage) this.say(this.assistant.firstMessage);
  }

  /** The caller's media socket connected at least once. */
  get joined(): boolean {
    return this.billed.joinedAt !== undefined;
  }

  /**
   * The seconds billed: the time with a connected caller and a live provider link, on this instance's clock, from the
   * media socket's first connection to the moment the end began (nothing before the join or while
   * the caller was away; nothing while the link was down or silent), plus however far the provider's own figure ran
   * ahead of the clock (a provider that counts more is billed what it counted). The provider's figure alone is not
   * the base: no usage arrives while its link is down, so it already lacks an outage that would then be subtracted
   * twice. Unrounded (liveness persists it; the orphan path bills it).
   */
  billableUsageSeconds(usageSeconds: number = this.usageSeconds): number {
    if (this.billed.joinedAt === undefined) return 0;
    const now = this.endedAt ?? this.env.now();
    const connected = this.billed.billedMs(now) / 1000;
    // A figure newer than the last report (the provider's final one, at the close) is as of the end.
    const reportedAt = usageSeconds === this.usageSeconds ? this.usageAt : now;
    const ahead = usageSeconds - (reportedAt - this.startedAt) / 1000;
    return this.carriedSeconds + connected + Math.max(0, ahead);
  }

  /**
   * Taken over from a dead owner that had billed `seconds` as of `at`: the caller counts as connected since then, and
   * the heartbeat, idle and provider deadlines start again now (the dead owner's last sight of them died with it).
   */
  resume(seconds: number, at: number): void {
    this.carriedSeconds = seconds;
    this.billed.resume(at);
    this.mediaAttached = true;
    this.lastHeartbeatAt = this.lastSpeechAt = this.lastProviderEventAt = this.env.now();
  }

  /** Whole seconds billed for a call whose provider counted `usageSeconds`. */
  billableSecondsOf(usageSeconds: number): number {
    return wholeBillableSeconds(this.billableUsageSeconds(usageSeconds));
  }

  onMediaDetached(): void {
    if (!this.mediaAttached) return;
    this.mediaAttached = false;
    this.mediaDetachedAt = this.env.now();
    this.billed.open(this.mediaDetachedAt);
    this.timeline.record('caller_disconnected');
  }

  /** A heartbeat arrived. False when it came sooner than the 1-per-second limit (it then does not count). */
  heartbeat(now: number): boolean {
    if (now - this.lastHeartbeatAt < this.limits.heartbeatMinGapMs && this.heartbeatsSeen > 0) return false;
    this.heartbeatsSeen++;
    this.lastHeartbeatAt = now;
    return true;
  }

  /** Supervisor tick: cheap comparisons; anything due starts asynchronously. */
  check(now: number): void {
    if (this.status !== 'active') return;
    this.gate.keepalive(now);
    if (this.heartbeatDeclared && now - this.lastHeartbeatAt >= this.limits.heartbeatLossMs)
      return void this.end('heartbeat_lost');
    if (now - this.startedAt >= this.limits.maxDurationMs) return void this.end('max_duration');
    if (now - this.lastSpeechAt >= this.limits.idleTimeoutMs) return void this.end('idle');
    if (this.mediaDetachedAt !== undefined && now - this.mediaDetachedAt >= this.limits.mediaGraceMs)
      return void this.end('disconnected');
    if (this.billed.joinedAt === undefined && now - this.startedAt >= this.limits.joinTimeoutMs) {
      this.log.info(
        { joinTimeoutMs: this.limits.joinTimeoutMs },
        'voice media socket never connected; ending the session',
      );
      return void this.end('disconnected');
    }
    if (!this.warned && now - this.startedAt >= this.limits.maxDurationMs - this.limits.maxDurationWarningMs) {
      this.warned = true;
      this.say(DURATION_WARNING);
    }
    if (!this.checkedIn && now - this.lastSpeechAt >= this.limits.idleTimeoutMs - this.limits.idleCheckInMs) {
      this.checkedIn = true;
      this.say(IDLE_CHECK_IN);
    }
    if (!this.quotaCheckInFlight && now - this.lastQuotaCheckAt >= this.limits.quotaCheckEveryMs) {
      this.lastQuotaCheckAt = now;
      this.quotaCheckInFlight = true;
      this.env.extendQuota(this, this.usageSeconds).then(
        (ok) => {
          this.quotaCheckInFlight = false;
          if (!ok) void this.end('usage_limit');
        },
        (err: unknown) => {
          this.quotaCheckInFlight = false;
          this.log.error({ err }, 'voice quota check failed; the call goes on');
        },
      );
    }
  }

  /** The provider session where one must exist (relayed transports, provider callbacks); throws before it is. */
  get provider(): VoiceSession {
    if (this.providerSession === undefined) throw new Error('the provider session is not attached yet');
    return this.providerSession;
  }

  /** A short spoken line from the service (check-in, warning): the gate opens for it. Nothing without a provider. */
  private say(text: string): void {
    if (this.providerSession === undefined) return;
    this.providerSession.appendCommentary(text);
    this.gate.decide('social');
  }

  /** End once; every later call gets the same final answer. `null` = ended by the client. */
  end(reason: EndReason, by: 'client' | 'service' = reason === null ? 'client' : 'service'): Promise<VoiceFinal> {
    if (this.endPromise !== undefined) return this.endPromise;
    this.endedAt = this.env.now();
    this.status = 'ending';
    this.endReason = reason;
    this.log.info({ endReason: reason, by }, 'voice session ending');
    this.endPromise = this.env.end(this, reason, by).finally(() => {
      this.status = 'ended';
    });
    return this.endPromise;
  }

  /** Tell listeners the call is over (the gate's end line is written by the service with the audience mapping). */
  notifyEnded(presented: EndReason): void {
    for (const l of [...this.listeners]) l.onEnded?.(presented);
    this.listeners.clear();
  }
}
