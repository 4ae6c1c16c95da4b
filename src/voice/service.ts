import { customAlphabet } from 'nanoid';
import { getAssistantById, getAssistantByPublicId, getOwnedAssistant, newKnowledgeId, type Assistant } from '../assistants/index.js';
import type { Principal } from '../auth/index.js';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import { AppError, isAppError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import {
  systemClock, VoiceProviderError, VoiceProviderErrorCodes, type VoiceClock, type VoiceDelegationRequest, type VoiceProvider,
} from '../providers/voice/index.js';
import type { SharedStore } from '../store/types.js';
import { createWidgetPolicy, type PolicyRequest, type WidgetPolicy } from '../widget/index.js';
import { issueControlToken, verifyControlToken } from './control-token.js';
import { presentEndReason, type EndReason, type VoiceAudience } from './end-reasons.js';
import { voiceErrors } from './errors.js';
import type { GateStream } from './gate.js';
import { groundQuestion } from './grounding.js';
import { LiveVoiceSession, type SessionLimits } from './live-session.js';
import { OWNERSHIP_DEFAULTS, VoiceOwnership, type OwnershipTiming } from './ownership.js';
import * as q from './queries.js';
import { noVoiceQuota, type VoiceQuota, type VoiceQuotaRequest } from './quota.js';
import { Supervisor } from './supervisor.js';
import type { TranscriptTurn } from './transcripts.js';
import type { MediaSockets } from './relay/media-socket.js';
import type { VoiceRecordings } from './recording/recordings.js';
import type { HeartbeatStatus, VoiceCapability, VoiceFinal, VoiceSource } from './types.js';

export interface VoiceServiceDeps {
  config: Readonly<Config>;
  log: Logger;
  sql: Sql;
  store: SharedStore;
  /** Absent when no provider is configured: mints answer 503. */
  voiceProvider?: VoiceProvider | undefined;
}

/** Knobs for tests and benches; production uses the defaults (API-DECISIONS, Voice). */
export interface VoiceOptions {
  /** Supervision clock (heartbeat loss, idle, max duration, keepalives). Tests pass a ManualClock. */
  clock?: VoiceClock;
  /** Ownership renewal and expiry (wall time: other instances read the records). Default 5 s / 15 s. */
  ownership?: Partial<OwnershipTiming>;
  /** How often an instance looks for sessions whose owner died (wall time). Default 30 s. */
  orphanSweepEveryMs?: number;
  quota?: VoiceQuota;
  /** The widget's keyless policy (Origin, rate limits, signature); the app passes the one chat uses. */
  keylessPolicy?: WidgetPolicy;
  limits?: Partial<Pick<SessionLimits, 'mediaGraceMs' | 'quotaCheckEveryMs'>>;
}

export const HEARTBEAT_LOSS_MS = 45_000;
/** A final answer stays readable this long after the end (API-DECISIONS: 5 minutes). */
export const TOMBSTONE_TTL_MS = 5 * 60_000;
const TOKEN_GRACE_MS = TOMBSTONE_TTL_MS + 60_000;
const DEGRADED_HEARTBEAT_MS = 2000;
const ORPHAN_SWEEP_BATCH = 100;

const sessionIdBody = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 24);
const tombstoneKey = (id: string) => `voice:final:${id}`;
const visitorKey = (assistantId: string, visitorId: string) => `voice:visitor:${assistantId}:${visitorId}`;

export interface MintInput {
  assistantId: string;
  capabilities: VoiceCapability[];
  recordingConsent?: boolean | undefined;
  visitorId?: string | undefined;
  conversationId?: string | undefined;
  source?: VoiceSource | undefined;
}

export interface MintCaller {
  principal: Principal;
  request: PolicyRequest & { host: string | undefined };
  signal: AbortSignal;
  log: Logger;
}

export interface MintResult {
  sessionId: string;
  conversationId: string;
  stream: { url: string; protocol: 'parley.voice.v1' };
  audio: { format: 'pcm16'; sampleRateHz: 24000; channels: 1 };
  recording: { enabled: boolean; consented: boolean };
  controlToken: string;
  heartbeatIntervalMs?: number;
  playbackGate: true;
  expiresAt: string;
}

export interface HeartbeatAnswer {
  status: HeartbeatStatus;
  nextHeartbeatMs: number;
  endReason?: EndReason;
}

export interface EndAnswer {
  sessionId: string;
  status: 'ended' | 'lost';
  endReason: EndReason;
  billableSeconds: number;
  usageFinalized: boolean;
}

export type GateOpening = { kind: 'live'; stream: GateStream } | { kind: 'over'; lines: string[] };

function audienceOf(keyless: boolean): VoiceAudience {
  return keyless ? 'visitor' : 'owner';
}

function present(final: VoiceFinal): EndAnswer {
  return {
    sessionId: final.sessionId,
    status: final.status,
    endReason: presentEndReason(final.endReason, audienceOf(final.keyless)),
    billableSeconds: final.billableSeconds,
    usageFinalized: final.usageFinalized,
  };
}

function finalOfRow(row: q.VoiceSessionRow): VoiceFinal {
  return {
    sessionId: row.id,
    status: row.state === 'lost' ? 'lost' : 'ended',
    endReason: row.endReason,
    billableSeconds: row.billableSeconds,
    usageFinalized: row.usageFinalized,
    keyless: row.source !== 'api',
  };
}

/**
 * The voice session control plane of one instance: mint, heartbeat, gate, end; the in-memory registry of the
 * sessions it owns, their supervision (one timer) and their ownership records (one renewal loop).
 * Background work starts with start() and stops with stop() (the app lifecycle), never at construction.
 */
export class VoiceService {
  readonly sessions = new Map<string, LiveVoiceSession>();
  /** The media side of this instance (set by voiceCapability): relays per session, recordings. Tests and metrics read them. */
  media: Pick<MediaSockets, 'relays' | 'closedTotals'> | undefined;
  recordings: VoiceRecordings | undefined;
  readonly supervisor: Supervisor;
  readonly ownership: VoiceOwnership;
  private readonly quota: VoiceQuota;
  private readonly keyless: WidgetPolicy;
  private readonly clock: VoiceClock;
  private readonly limits: Pick<SessionLimits, 'mediaGraceMs' | 'quotaCheckEveryMs'>;
  private readonly sweepEveryMs: number;
  private renewTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private renewing = false;
  private draining = false;

  constructor(
    private readonly deps: VoiceServiceDeps,
    options: VoiceOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.supervisor = new Supervisor(this.clock);
    this.ownership = new VoiceOwnership(deps.store, deps.config.instanceId, { ...OWNERSHIP_DEFAULTS, ...options.ownership });
    this.quota = options.quota ?? noVoiceQuota;
    this.keyless = options.keylessPolicy ?? createWidgetPolicy(deps);
    this.limits = { mediaGraceMs: 15_000, quotaCheckEveryMs: 10_000, ...options.limits };
    this.sweepEveryMs = options.orphanSweepEveryMs ?? 30_000;
  }

  get instanceId(): string {
    return this.ownership.instanceId;
  }

  // ---- lifecycle ------------------------------------------------------------------------------------------

  /** Start supervision, ownership renewal and the orphan sweep (on listen). */
  start(): void {
    this.draining = false;
    this.supervisor.start();
    this.renewTimer ??= setInterval(() => void this.renewAll(), this.ownership.timing.renewEveryMs);
    this.renewTimer.unref();
    this.sweepTimer ??= setInterval(() => void this.sweepOrphans(), this.sweepEveryMs);
    this.sweepTimer.unref();
  }

  /** SIGTERM drain: refuse new mints, end every session with `shutdown` (settled, tombstoned), stop the loops. */
  async stop(): Promise<void> {
    this.draining = true;
    await Promise.allSettled([...this.sessions.values()].map((s) => s.end('shutdown')));
    this.supervisor.stop();
    if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    this.renewTimer = this.sweepTimer = undefined;
  }

  // ---- mint -----------------------------------------------------------------------------------------------

  async mint(input: MintInput, caller: MintCaller): Promise<MintResult> {
    const { principal } = caller;
    const isKeyless = principal.kind === 'keyless';
    const provider = this.deps.voiceProvider;
    const assistant = await this.resolveAssistant(principal, input.assistantId);
    const visitorId = input.visitorId ?? null;
    if (isKeyless) await this.keyless.admit(caller.request, assistant, visitorId);
    const voice = assistant.settings.voice;
    if (!voice.enabled) throw isKeyless ? voiceErrors.unavailable() : voiceErrors.disabled();
    // Consent (spec rule 2): always required for widget/playground callers; for keys when the assistant says so.
    const recorded = voice.recording === 'on';
    const consentRequired = isKeyless || voice.requireConsent;
    if (recorded && consentRequired && input.recordingConsent !== true) throw voiceErrors.consentRequired();
    if (this.draining) throw isKeyless ? voiceErrors.unavailable() : voiceErrors.draining();
    if (provider === undefined) throw isKeyless ? voiceErrors.unavailable() : voiceErrors.providerNotConfigured();

    const source: VoiceSource = isKeyless ? (input.source === 'playground' ? 'playground' : 'widget') : 'api';
    const accountId = assistant.accountId;
    const conversationId = await this.resolveConversation(input.conversationId, assistant, isKeyless, visitorId);
    if (source === 'widget' && visitorId !== null) await this.supersedeVisitor(assistant.id, visitorId);

    const id = `vs_${sessionIdBody()}`;
    const quotaRequest: VoiceQuotaRequest = { accountId, sessionId: id, assistantId: assistant.id, source, keyless: isKeyless };
    await this.quota.admit(quotaRequest);

    const maxDurationSeconds = Math.min(voice.maxDurationSeconds, this.deps.config.VOICE_MAX_DURATION_CAP_SECONDS);
    const maxDurationMs = maxDurationSeconds * 1000;
    const idleTimeoutMs = voice.idleTimeoutSeconds * 1000;
    const log = this.deps.log.child({ voiceSessionId: id, assistantId: assistant.id, source });
    const session = new LiveVoiceSession(
      {
        id,
        accountId,
        assistant: { id: assistant.id, language: assistant.settings.language },
        conversationId,
        source,
        keyless: isKeyless,
        visitorId,
        heartbeat: input.capabilities.includes('heartbeat'),
        // No consent, no file: an assistant that records still records only callers who said yes.
        recorded: recorded && input.recordingConsent === true,
        limits: {
          heartbeatLossMs: HEARTBEAT_LOSS_MS,
          maxDurationMs,
          maxDurationWarningMs: Math.min(30_000, Math.floor(maxDurationMs / 10)),
          idleTimeoutMs,
          idleCheckInMs: Math.min(20_000, Math.floor(idleTimeoutMs / 3)),
          heartbeatMinGapMs: 1000,
          ...this.limits,
        },
        startedAt: this.clock.now(),
        log,
      },
      this.sessionEnvironment,
    );
    const row: q.NewVoiceSession = {
      id,
      accountId,
      assistantId: assistant.id,
      conversationId,
      apiKeyId: principal.kind === 'api_key' ? principal.keyId : null,
      source,
      visitorId,
      capabilities: [...input.capabilities],
      recordingEnabled: recorded,
      recordingConsent: input.recordingConsent === true,
      provider: provider.kind,
      providerSessionId: null,
      ownerInstance: this.instanceId,
      maxDurationSeconds,
      idleTimeoutSeconds: voice.idleTimeoutSeconds,
    };

    // The provider session starts with the data-channel lock; start() resolves only once it is confirmed (3 s).
    try {
      session.provider = await provider.startSession(
        { instructions: this.instructionsFor(assistant), delegation: { type: 'client' } },
        { handlers: session.handlers, logger: log, signal: caller.signal },
      );
    } catch (err) {
      await this.quota.release(quotaRequest).catch((e: unknown) => log.error({ err: e }, 'releasing a voice grant failed'));
      const code = isAppError(err) ? err.code : VoiceProviderErrorCodes.UNAVAILABLE;
      await q.insertFailedSession(this.deps.sql, { ...row, failureCode: code }).catch((e: unknown) => log.error({ err: e }, 'recording a failed voice mint failed'));
      log.warn({ code }, 'voice mint refused: provider session not confirmed');
      if (err instanceof VoiceProviderError) throw err;
      throw new VoiceProviderError(VoiceProviderErrorCodes.UNAVAILABLE, 'The voice provider could not start the session.', { cause: err });
    }

    try {
      // Ownership before the row: a row is never active without a record, so no instance can mistake a session
      // being minted for an orphan.
      const lease = await this.ownership.claim(id);
      if (lease === null) throw new Error('voice session id collision');
      session.lease = lease;
      row.providerSessionId = session.provider.id;
      await this.deps.sql.begin(async (tx) => {
        if (input.conversationId === undefined) {
          await q.insertConversation(tx, { id: conversationId, assistantId: assistant.id, accountId, visitorId, source });
        }
        await q.insertActiveSession(tx, row);
      });
    } catch (err) {
      if (session.lease !== undefined) await this.ownership.release(session.lease).catch(() => undefined);
      await session.provider.close().catch(() => undefined);
      await this.quota.release(quotaRequest).catch(() => undefined);
      throw err;
    }

    this.sessions.set(id, session);
    this.supervisor.add(session);
    if (source === 'widget' && visitorId !== null) {
      await this.deps.store.set(visitorKey(assistant.id, visitorId), id, { ttlMs: maxDurationMs + 60_000 }).catch((err: unknown) => log.warn({ err }, 'visitor index not written'));
    }
    // The caller left while we started: nobody holds the token, so end it at once (settled like any other).
    if (caller.signal.aborted) void session.end('disconnected');

    const expiresAtMs = Date.now() + maxDurationMs + TOKEN_GRACE_MS;
    const controlToken = issueControlToken(this.deps.config.secretKey, id, expiresAtMs);
    log.info({ heartbeat: session.heartbeatDeclared, recording: recorded }, 'voice session started');
    return {
      sessionId: id,
      conversationId,
      stream: { url: this.streamUrl(caller.request.host, id, controlToken), protocol: 'parley.voice.v1' },
      audio: { format: 'pcm16', sampleRateHz: 24000, channels: 1 },
      recording: { enabled: recorded, consented: input.recordingConsent === true },
      controlToken,
      ...(session.heartbeatDeclared ? { heartbeatIntervalMs: this.deps.config.VOICE_HEARTBEAT_INTERVAL_MS } : {}),
      playbackGate: true,
      expiresAt: new Date(expiresAtMs).toISOString(),
    };
  }

  private async resolveAssistant(principal: Principal, assistantId: string): Promise<Assistant> {
    if (principal.kind === 'keyless') return getAssistantByPublicId(this.deps.sql, assistantId);
    return getOwnedAssistant(this.deps.sql, principal, assistantId);
  }

  /** Continue a conversation of this assistant (keyless: only the same visitor's), or start a new one. */
  private async resolveConversation(conversationId: string | undefined, assistant: Assistant, keyless: boolean, visitorId: string | null): Promise<string> {
    if (conversationId === undefined) return newKnowledgeId('conv');
    const found = await q.findConversation(this.deps.sql, conversationId, assistant.id);
    if (found === undefined || (keyless && found.visitorId !== visitorId)) {
      throw new AppError('VOICE_CONVERSATION_NOT_FOUND', 404, 'No such conversation.');
    }
    return found.id;
  }

  /** A newer widget session of the same visitor ends the older one (`superseded`), wherever it runs. */
  private async supersedeVisitor(assistantId: string, visitorId: string): Promise<void> {
    const olderId = await this.deps.store.get(visitorKey(assistantId, visitorId));
    if (olderId === null) return;
    const local = this.sessions.get(olderId);
    if (local !== undefined) {
      void local.end('superseded');
      return;
    }
    // Owned elsewhere: mark the record; the owner sees it on its next renewal and ends the session itself.
    await this.ownership.requestEnd(olderId, 'superseded');
  }

  private instructionsFor(assistant: Assistant): string {
    const base = assistant.instructions ?? '';
    return `${base}\n\nYou are speaking with a caller on a live voice call. Keep answers short and spoken. ` +
      'For any question about facts, products, policies or anything the owner\'s documents may cover, delegate the turn ' +
      'and answer only from what you are given back.';
  }

  private streamUrl(host: string | undefined, id: string, token: string): string {
    const base = this.deps.config.PUBLIC_URL ?? `http://${host ?? `${this.deps.config.HOST}:${this.deps.config.PORT}`}`;
    const url = new URL(`/api/v1/voice/sessions/${id}/stream`, base);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('token', token);
    return url.toString();
  }

  // ---- heartbeat, gate, end -------------------------------------------------------------------------------

  private checkToken(id: string, token: string): void {
    if (!verifyControlToken(this.deps.config.secretKey, token, id, Date.now())) throw voiceErrors.notFound();
  }

  async heartbeat(id: string, token: string): Promise<HeartbeatAnswer> {
    this.checkToken(id, token);
    const interval = this.deps.config.VOICE_HEARTBEAT_INTERVAL_MS;
    const live = this.sessions.get(id);
    if (live !== undefined) {
      if (live.status !== 'active') {
        return { status: 'ended', nextHeartbeatMs: interval, endReason: presentEndReason(live.endReason, audienceOf(live.keyless)) };
      }
      if (!live.heartbeat(this.clock.now())) throw voiceErrors.heartbeatTooFrequent();
      if (live.linkState === 'reconnecting') return { status: 'degraded', nextHeartbeatMs: Math.min(DEGRADED_HEARTBEAT_MS, interval) };
      return { status: 'healthy', nextHeartbeatMs: interval };
    }
    const final = await this.finalElsewhere(id);
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
  async locateForMedia(id: string, token: string): Promise<LiveVoiceSession> {
    this.checkToken(id, token);
    const live = this.sessions.get(id);
    if (live !== undefined) {
      if (live.status !== 'active') throw voiceErrors.notFound();
      return live;
    }
    const record = await this.ownership.read(id);
    if (record !== null && record.instanceId !== this.instanceId) throw voiceErrors.misrouted(record.instanceId, record.expiresAt);
    throw voiceErrors.notFound();
  }

  async openGate(id: string, token: string): Promise<GateOpening> {
    this.checkToken(id, token);
    const live = this.sessions.get(id);
    if (live !== undefined) {
      const stream = live.gate.open();
      if (stream === null) throw voiceErrors.gateStreamLimit(4);
      return { kind: 'live', stream };
    }
    const final = await this.finalElsewhere(id);
    return {
      kind: 'over',
      lines: [
        JSON.stringify({ type: 'gate', seq: 0, state: 'closed', reason: 'start', inputEndMs: null }) + '\n',
        JSON.stringify({ type: 'end', endReason: presentEndReason(final.endReason, audienceOf(final.keyless)) }) + '\n',
      ],
    };
  }

  /** End by the caller (endReason null), or the final answer of a session that already ended (5 minutes). */
  async end(id: string, caller: { principal: Principal; visitorId: string | null; request: PolicyRequest }): Promise<EndAnswer> {
    const live = this.sessions.get(id);
    if (live !== undefined) {
      await this.authorizeEnd(caller, { accountId: live.accountId, assistantId: live.assistant.id, keyless: live.keyless, visitorId: live.visitorId });
      return present(await live.end(null, 'client'));
    }
    const record = await this.ownership.read(id);
    if (record !== null && record.instanceId !== this.instanceId) throw voiceErrors.misrouted(record.instanceId, record.expiresAt);
    const row = await q.findSession(this.deps.sql, id);
    if (row === undefined || row.state === 'failed') throw voiceErrors.notFound();
    await this.authorizeEnd(caller, { accountId: row.accountId, assistantId: row.assistantId, keyless: row.source !== 'api', visitorId: row.visitorId });
    const tomb = await this.readTombstone(id);
    if (tomb !== null) return present(tomb);
    if (row.state === 'active') return present(await this.settleOrphan(row));
    // Over for more than 5 minutes: the final answer is gone.
    throw voiceErrors.notFound();
  }

  private async authorizeEnd(
    caller: { principal: Principal; visitorId: string | null; request: PolicyRequest },
    s: { accountId: string; assistantId: string; keyless: boolean; visitorId: string | null },
  ): Promise<void> {
    const p = caller.principal;
    if (p.kind !== 'keyless') {
      // An owner may end any session of the account (also widget ones); another account's is not found.
      if (p.accountId !== s.accountId) throw voiceErrors.notFound();
      return;
    }
    if (!s.keyless || (s.visitorId !== null && caller.visitorId !== s.visitorId)) throw voiceErrors.notFound();
    const assistant = await getAssistantById(this.deps.sql, s.assistantId);
    if (assistant === undefined) throw voiceErrors.notFound();
    this.keyless.checkOrigin(caller.request, assistant);
  }

  /**
   * The state of a session this instance does not hold: 421 when its owner lives elsewhere; else its final answer
   * (tombstone, or the row), settling it as `lost` when it is still active with no owner (the owner died).
   */
  private async finalElsewhere(id: string): Promise<VoiceFinal> {
    const record = await this.ownership.read(id);
    if (record !== null && record.instanceId !== this.instanceId) throw voiceErrors.misrouted(record.instanceId, record.expiresAt);
    const tomb = await this.readTombstone(id);
    if (tomb !== null) return tomb;
    const row = await q.findSession(this.deps.sql, id);
    if (row === undefined || row.state === 'failed') throw voiceErrors.notFound();
    if (row.state === 'active') return this.settleOrphan(row);
    return finalOfRow(row);
  }

  /**
   * Settle a session whose owner is gone, exactly once across the fleet: the row update is conditional on the
   * generation we read (and bumps it, fencing the old owner should it come back); whoever loses the race reads the
   * winner's result. Billed from the last usage the owner persisted; not final (the provider's figure died with it).
   */
  private async settleOrphan(row: q.VoiceSessionRow): Promise<VoiceFinal> {
    const billableSeconds = Math.ceil(row.usageSeconds);
    const settled = await q.settleSession(this.deps.sql, {
      id: row.id,
      generation: row.ownerGeneration,
      state: 'lost',
      endReason: 'control_lost',
      endedBy: 'reaper',
      usageSeconds: row.usageSeconds,
      billableSeconds,
      usageFinalized: false,
    });
    if (settled === undefined) {
      const now = await q.findSession(this.deps.sql, row.id);
      return finalOfRow(now ?? row);
    }
    const final = finalOfRow(settled);
    this.deps.log.warn({ voiceSessionId: row.id, ownerInstance: row.ownerInstance }, 'voice session owner gone; settled as lost');
    const request: VoiceQuotaRequest = { accountId: row.accountId, sessionId: row.id, assistantId: row.assistantId, source: row.source, keyless: row.source !== 'api' };
    await this.quota.settle(request, billableSeconds, false).catch((err: unknown) => this.deps.log.error({ err, voiceSessionId: row.id }, 'voice settlement failed'));
    await this.writeTombstone(final);
    return final;
  }

  private async readTombstone(id: string): Promise<VoiceFinal | null> {
    const raw = await this.deps.store.get(tombstoneKey(id));
    if (raw === null) return null;
    try {
      return JSON.parse(raw) as VoiceFinal;
    } catch {
      return null;
    }
  }

  private async writeTombstone(final: VoiceFinal): Promise<void> {
    await this.deps.store.set(tombstoneKey(final.sessionId), JSON.stringify(final), { ttlMs: TOMBSTONE_TTL_MS });
  }

  // ---- what live sessions ask of the service ----------------------------------------------------------------

  private readonly sessionEnvironment = {
    now: () => this.clock.now(),
    end: (session: LiveVoiceSession, reason: EndReason, by: 'client' | 'service') => this.finish(session, reason, by),
    ground: (session: LiveVoiceSession, request: VoiceDelegationRequest, question: string) => void this.ground(session, request, question),
    writeTurn: (session: LiveVoiceSession, turn: TranscriptTurn) => this.writeTurn(session, turn),
    extendQuota: (session: LiveVoiceSession, used: number) => this.quota.extend(session.quotaRequest, used),
  };

  /**
   * Tear down in reverse order of the mint: the gate's end line and the relay first (the caller stops hearing the
   * assistant at once), then the provider (final usage), transcripts, the settlement (exactly once, fenced by the
   * generation), the tombstone, the ownership record.
   */
  private async finish(session: LiveVoiceSession, reason: EndReason, by: 'client' | 'service'): Promise<VoiceFinal> {
    const presented = presentEndReason(reason, audienceOf(session.keyless));
    this.supervisor.delete(session);
    session.gate.end(presented);
    session.notifyEnded(presented);
    const closed = session.providerClosed ?? (session.provider !== undefined ? await session.provider.close() : undefined);
    const usageSeconds = closed?.usage.seconds ?? session.usageSeconds;
    const billableSeconds = Math.ceil(usageSeconds);
    const usageFinalized = closed?.usageFinal ?? false;
    session.transcripts.flush();
    await this.turnWrites.get(session.id);
    this.turnWrites.delete(session.id);
    this.lastUserMessage.delete(session.id);
    let final: VoiceFinal = { sessionId: session.id, status: 'ended', endReason: reason, billableSeconds, usageFinalized, keyless: session.keyless };
    try {
      const settled = await q.settleSession(this.deps.sql, {
        id: session.id,
        generation: session.lease?.record.generation ?? 1,
        state: 'ended',
        endReason: reason,
        endedBy: by,
        usageSeconds,
        billableSeconds,
        usageFinalized,
      });
      if (settled !== undefined) {
        await this.quota.settle(session.quotaRequest, billableSeconds, usageFinalized).catch((err: unknown) => session.log.error({ err }, 'voice settlement failed'));
        await this.writeTombstone(final).catch((err: unknown) => session.log.error({ err }, 'voice tombstone not written'));
      } else {
        // Someone else settled it (we were fenced: our record expired and another instance declared it lost).
        const row = await q.findSession(this.deps.sql, session.id);
        if (row !== undefined) final = finalOfRow(row);
        session.log.warn({ state: row?.state }, 'voice session was settled elsewhere; not settling again');
      }
      if (session.lease !== undefined) await this.ownership.release(session.lease).catch(() => undefined);
    } catch (err) {
      session.log.error({ err }, 'voice session settlement failed');
    } finally {
      this.sessions.delete(session.id);
    }
    session.log.info({ endReason: reason, billableSeconds, usageFinalized }, 'voice session ended');
    return final;
  }

  private readonly turnWrites = new Map<string, Promise<void>>();
  private readonly lastUserMessage = new Map<string, string>();

  /** Transcript turns become messages in order, one write chain per session, never on the provider's hot path. */
  private writeTurn(session: LiveVoiceSession, turn: TranscriptTurn): void {
    const id = newKnowledgeId('msg');
    const inReplyTo = turn.role === 'assistant' ? (this.lastUserMessage.get(session.id) ?? null) : null;
    if (turn.role === 'user') this.lastUserMessage.set(session.id, id);
    const previous = this.turnWrites.get(session.id) ?? Promise.resolve();
    const next = previous.then(() =>
      q.insertTurn(this.deps.sql, {
        id,
        conversationId: session.conversationId,
        assistantId: session.assistant.id,
        role: turn.role,
        content: turn.text,
        inReplyTo,
        outcome: turn.outcome,
        sources: turn.sources,
        provider: `voice:${this.deps.voiceProvider?.kind ?? 'unknown'}`,
        model: this.deps.config.VOICE_MODEL,
      }).catch((err: unknown) => session.log.error({ err }, 'voice transcript turn not stored')),
    );
    this.turnWrites.set(session.id, next);
  }

  private async ground(session: LiveVoiceSession, request: VoiceDelegationRequest, question: string): Promise<void> {
    try {
      const answer = await groundQuestion(this.deps.sql, session.assistant, question);
      if (session.status !== 'active') return;
      session.provider.appendInstructions(answer.instruction, request.id);
      session.provider.appendCommentary(answer.commentary, request.id);
      session.answerReady(answer.sources, answer.outcome);
    } catch (err) {
      session.log.error({ err }, 'grounding a delegated voice turn failed');
      if (session.status !== 'active') return;
      session.provider.appendCommentary('Sorry, I cannot look that up right now.', request.id);
      session.answerReady([], 'no_answer');
    }
  }

  // ---- ownership renewal and the orphan sweep (wall time) ---------------------------------------------------

  /** One pass for every owned session: renew records (fenced ones stop), then persist liveness and usage once. */
  async renewAll(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      const owned = [...this.sessions.values()].filter((s) => s.status === 'active' && s.lease !== undefined);
      await Promise.all(
        owned.map(async (session) => {
          try {
            const outcome = await this.ownership.renew(session.lease);
            if (outcome.kind === 'renewed') return;
            const current = outcome.current;
            if (current !== null && current.instanceId === this.instanceId && current.generation === session.lease.record.generation && current.endRequested !== undefined) {
              // Another instance asked us to end it (a newer widget session of the same visitor).
              session.lease.record = current;
              session.lease.raw = JSON.stringify(current);
              void session.end(current.endRequested as EndReason);
              return;
            }
            session.log.warn('voice ownership record lost; this instance no longer controls the session');
            void session.end('control_lost');
          } catch (err) {
            session.log.warn({ err }, 'voice ownership renewal failed; retrying next tick');
          }
        }),
      );
      const active = owned.filter((s) => s.status === 'active');
      await q.renewSessions(this.deps.sql, active.map((s) => s.id), active.map((s) => s.usageSeconds));
    } catch (err) {
      this.deps.log.warn({ err }, 'voice session renewal pass failed');
    } finally {
      this.renewing = false;
    }
  }

  /** Settle sessions whose owner stopped renewing and whose record has expired (the owner died). */
  async sweepOrphans(): Promise<number> {
    let settled = 0;
    try {
      const stale = await q.findStaleActive(this.deps.sql, this.ownership.timing.ttlMs, ORPHAN_SWEEP_BATCH);
      for (const row of stale) {
        if (this.sessions.has(row.id)) continue;
        if ((await this.ownership.read(row.id)) !== null) continue;
        const final = await this.settleOrphan(row);
        if (final.status === 'lost') settled++;
      }
    } catch (err) {
      this.deps.log.warn({ err }, 'voice orphan sweep failed');
    }
    return settled;
  }
}
