import { getAssistantByPublicId, getOwnedAssistant, newKnowledgeId, type Assistant } from '../../assistants/index.js';
import { isVisitorsOwnConversation } from '../../conversations/index.js';
import { callerSource, type Principal } from '../../auth/index.js';
import { AppError, isAppError } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import {
  bytesPerMs,
  DEFAULT_AUDIO_FORMAT,
  transportsOf,
  VoiceProviderError,
  VoiceProviderErrorCodes,
  type VoiceAudioFormat,
} from '../../providers/voice/index.js';
import type { PolicyRequest } from '../../widget/index.js';
import { TOMBSTONE_TTL_MS, type VoiceContext } from './context.js';
import { sessionLimits } from './limits.js';
import { issueControlToken } from './control-token.js';
import { voiceErrors } from '../errors.js';
import { LiveVoiceSession } from './live-session.js';
import * as q from '../queries.js';
import type { VoiceQuotaRequest } from './quota.js';
import { newSessionId } from './session-id.js';
import { liveAssistantOf, voiceShapeOf, type FirstMessageVariables } from './voice-shape.js';
import { rememberDirect } from './takeover.js';
import { instructionsFor, publicBaseOf, resolveConversation, turnObserverOf } from './mint-context.js';
import { voiceToolsOf } from './tool-calls.js';
import { rememberVisitorCall, supersedeVisitor, withVisitorMint } from './visitor.js';
import type { VoiceCapability, VoiceSource } from '../types.js';
import type { CallerTransport, MintStream } from './transport.js';
import { CallTimeline } from '../timeline/call-timeline.js';
import type { TurnObserver } from '../timeline/turn-clock.js';
import { handlersWithTimeline, watchTimeline } from '../timeline/watch.js';

/**
 * Mint admission (POST /api/v1/voice/sessions, docs/voice-protocol.md): assistant + widget policy -> voice enabled -> consent ->
 * draining / provider -> supersede -> quota -> provider session with the lock confirmed (the ownership record is claimed
 * meanwhile) -> rows -> control token. Every step that fails undoes what the earlier ones took.
 */

export interface MintInput extends FirstMessageVariables {
  assistantId: string;
  capabilities: VoiceCapability[];
  recordingConsent?: boolean | undefined;
  visitorId?: string | undefined;
  conversationId?: string | undefined;
  source?: VoiceSource | undefined;
  /** The call's audio both ways; PCM16 24 kHz when omitted. */
  audio?: VoiceAudioFormat | undefined;
  /** How the caller connects: the media WebSocket (default), or WebRTC straight to the provider with this offer. */
  transport?: { type: 'websocket' } | { type: 'webrtc'; sdp: string } | undefined;
  /** Internal: the caller transport (by name; a phone call's mint names `twilio`) whose `stream` it answers. */
  callerTransport?: string | undefined;
  /** A phone call's caller number (E.164, as the carrier gave it): stored with the call, shown masked. */
  callerNumber?: string | undefined;
}

/** A call a carrier brought in for a registered number: it acts for the account that owns the number. */
export interface PhonePrincipal {
  kind: 'phone';
  accountId: string;
}

export interface MintCaller {
  principal: Principal | PhonePrincipal;
  request: PolicyRequest & { host: string | undefined };
  signal: AbortSignal;
  log: Logger;
  tools?: VoiceContext['tools']; // a scenario run's own (its mocks answer): set by the scenario runner, never a request
}

export interface MintResult {
  sessionId: string;
  conversationId: string;
  /** The media WebSocket (websocket transport). */
  stream?: MintStream;
  /** The provider's SDP answer (webrtc transport: the caller's audio goes to the provider, not through Parley). */
  transport?: { type: 'webrtc'; sdp: string };
  audio: VoiceAudioFormat & { channels: 1 };
  recording: { enabled: boolean; consented: boolean };
  controlToken: string;
  heartbeatIntervalMs?: number;
  playbackGate: true;
  expiresAt: string;
}

const TOKEN_GRACE_MS = TOMBSTONE_TTL_MS + 60_000;

export async function mintSession(ctx: VoiceContext, input: MintInput, caller: MintCaller): Promise<MintResult> {
  const { deps } = ctx;
  const { principal } = caller;
  const isKeyless = principal.kind === 'keyless';
  const provider = deps.voiceProvider;
  // The media URL's base is settled before anything is started: a bad Host is a 400 here, never a failure after the
  // provider session exists (a failure there would leave a live, billed orphan).
  const publicBase = publicBaseOf(ctx, caller.request.host, caller.request.headers['x-forwarded-proto']);
  const transport = input.callerTransport === undefined ? ctx.transport : ctx.transports.get(input.callerTransport);
  if (transport === undefined) throw new Error('the caller transport is not attached to the voice service');
  const offer = input.transport?.type === 'webrtc' ? input.transport.sdp : undefined;
  const direct = ctx.direct;
  if (offer !== undefined && direct === undefined) throw new Error('no WebRTC transport is attached');
  const assistant = await resolveAssistant(ctx, principal, input.assistantId);
  const visitorId = input.visitorId ?? null;
  if (isKeyless) await ctx.keyless.admit(caller.request, assistant, visitorId);
  const voice = assistant.settings.voice;
  if (!voice.enabled) throw isKeyless ? voiceErrors.unavailable() : voiceErrors.disabled();
  // Playground (exempt from voice minutes by default) only for the owner's dashboard session: a keyless caller is
  // a widget and a key is api, whatever source they ask for.
  const source: VoiceSource =
    principal.kind === 'phone' ? 'phone' : callerSource(principal, input.source === 'phone' ? undefined : input.source);
  // Consent: always required for widget/playground callers; for keys when the assistant says so.
  const recorded = voice.recording === 'on';
  const consentRequired = isKeyless || source === 'playground' || voice.requireConsent;
  if (recorded && consentRequired && input.recordingConsent !== true) throw voiceErrors.consentRequired();
  if (ctx.draining) throw isKeyless ? voiceErrors.unavailable() : voiceErrors.draining();
  if (provider === undefined) throw isKeyless ? voiceErrors.unavailable() : voiceErrors.providerNotConfigured();
  // A transport the provider does not take is the caller's choice to correct (4xx), not a provider failure.
  const asked = offer === undefined ? 'websocket' : 'webrtc';
  if (!transportsOf(provider).includes(asked)) throw voiceErrors.transportUnsupported(asked, transportsOf(provider));

  const conversationId = await resolveConversation(ctx, input.conversationId, assistant, isKeyless, visitorId);
  const admitted: Admitted = { publicBase, transport, offer, assistant, visitorId, source, recorded, conversationId };
  if (source !== 'widget' || visitorId === null) return startCall(ctx, input, caller, admitted);
  // Supersede, admission and start are one step per visitor: a second mint of the visitor waits for this one.
  return withVisitorMint(ctx, assistant.id, visitorId, caller.signal, async () => {
    await supersedeVisitor(ctx, assistant.id, visitorId, caller.signal);
    return startCall(ctx, input, caller, admitted);
  });
}

/** What the checks before the supersede settled for a mint. */
interface Admitted {
  publicBase: URL;
  transport: CallerTransport;
  offer: string | undefined;
  assistant: Assistant;
  visitorId: string | null;
  source: VoiceSource;
  recorded: boolean;
  conversationId: string;
}

/** Quota -> provider session -> ownership -> rows -> registration -> control token. */
async function startCall(
  ctx: VoiceContext,
  input: MintInput,
  caller: MintCaller,
  { publicBase, transport, offer, assistant, visitorId, source, recorded, conversationId }: Admitted,
): Promise<MintResult> {
  const { deps } = ctx;
  const { principal } = caller;
  const isKeyless = principal.kind === 'keyless';
  const provider = deps.voiceProvider;
  if (provider === undefined) throw voiceErrors.providerNotConfigured();
  const direct = ctx.direct;
  const voice = assistant.settings.voice;
  const accountId = assistant.accountId;
  const id = newSessionId(deps.config.INSTANCE_ROUTE_KEY);
  const quotaRequest: VoiceQuotaRequest = {
    accountId,
    sessionId: id,
    assistantId: assistant.id,
    source,
    keyless: isKeyless,
  };
  await ctx.quota.admit(quotaRequest);

  const maxDurationSeconds = Math.min(voice.maxDurationSeconds, deps.config.VOICE_MAX_DURATION_CAP_SECONDS);
  const maxDurationMs = maxDurationSeconds * 1000;
  const log = deps.log.child({ voiceSessionId: id, assistantId: assistant.id, source });
  // WebRTC negotiates its codec with the browser; the sideband reflects PCM16 24 kHz, which recordings are written in.
  const audio: VoiceAudioFormat = offer === undefined ? (input.audio ?? DEFAULT_AUDIO_FORMAT) : DEFAULT_AUDIO_FORMAT;
  const transportName =
    offer === undefined || direct === undefined ? (transport.timelineName ?? transport.name) : direct.name;
  const timeline = new CallTimeline(transportName, undefined, Date.now(), turnObserverOf(ctx));
  timeline.turnClock.bytesPerMs = bytesPerMs(audio);
  timeline.record('minted', { source, audio: audio.format, sampleRateHz: audio.sampleRateHz });
  const session = new LiveVoiceSession(
    {
      id,
      accountId,
      assistant: liveAssistantOf(assistant, input.variables),
      conversationId,
      source,
      keyless: isKeyless,
      visitorId,
      heartbeat: input.capabilities.includes('heartbeat'),
      // No consent, no file: an assistant that records still records only callers who said yes.
      recorded: recorded && input.recordingConsent === true,
      limits: sessionLimits(maxDurationSeconds, voice.idleTimeoutSeconds, ctx.limits),
      startedAt: ctx.clock.now(),
      audio,
      log,
      timeline,
    },
    ctx.environment,
  );
  watchTimeline(session);
  const row: q.NewVoiceSession = {
    id,
    accountId,
    assistantId: assistant.id,
    conversationId,
    apiKeyId: principal.kind === 'api_key' ? principal.keyId : null,
    source,
    visitorId,
    capabilities: [...new Set(input.capabilities)], // a set: a repeated value is stored once
    recordingEnabled: recorded,
    recordingConsent: input.recordingConsent === true,
    provider: provider.kind,
    providerSessionId: null,
    ownerInstance: ctx.ownership.instanceId,
    maxDurationSeconds,
    idleTimeoutSeconds: voice.idleTimeoutSeconds,
    callerNumber: principal.kind === 'phone' ? (input.callerNumber ?? null) : null,
  };

  // Ownership is claimed while the provider starts (its round trip is off the mint's path), and always before the
  // row: a row is never active without a record, so no instance can mistake a session being minted for an orphan.
  // A start that fails releases the record with the rest.
  const claiming = ctx.ownership.claim(id);
  claiming.catch(() => undefined); // awaited below, after the start, whatever the start did
  // The provider session starts with the data-channel lock; start() resolves only once it is confirmed (3 s). A
  // WebRTC call's answer is handed out only after the sideband echoed the lock (the same 3 s).
  let answerSdp: string | undefined;
  try {
    const tooling = await voiceToolsOf(ctx, session, assistant, handlersWithTimeline(session), caller.tools);
    const config = {
      ...tooling.config,
      instructions: instructionsFor(assistant),
      ...voiceShapeOf(assistant.settings.voice), // the owner's first message, voice and turn taking
      delegation: { type: 'client' as const },
      audio,
      // The local recognizer hears best what the documents talk about; hosted providers take no hints.
      ...(provider.kind === 'local' ? { speechHints: await q.speechHintsOf(deps.sql, assistant.id, 200_000) } : {}),
    };
    const start = { handlers: tooling.handlers, logger: log, signal: caller.signal };
    if (offer === undefined || direct === undefined)
      session.providerSession = await provider.startSession(config, start);
    else {
      const handlers = { ...start.handlers, ...direct.watch(session) };
      const started = await provider.startWebRtcSession(config, offer, { ...start, handlers });
      session.providerSession = started.session;
      answerSdp = started.answerSdp;
    }
    timeline.record('provider_connected');
  } catch (err) {
    const claimed = await claiming.catch(() => null);
    if (claimed !== null) await ctx.ownership.release(claimed).catch(() => undefined);
    await ctx.quota
      .release(quotaRequest)
      .catch((e: unknown) => log.error({ err: e }, 'releasing a voice grant failed'));
    const code = isAppError(err) ? err.code : VoiceProviderErrorCodes.UNAVAILABLE;
    await q
      .insertFailedSession(deps.sql, { ...row, failureCode: code })
      .catch((e: unknown) => log.error({ err: e }, 'recording a failed voice mint failed'));
    log.warn({ code }, 'voice mint refused: provider session not confirmed');
    if (err instanceof VoiceProviderError) throw err;
    throw new VoiceProviderError(
      VoiceProviderErrorCodes.UNAVAILABLE,
      'The voice provider could not start the session.',
      { cause: err },
    );
  }

  try {
    const lease = await claiming;
    if (lease === null) throw new Error('voice session id collision');
    session.lease = lease;
    row.providerSessionId = session.provider.id;
    // A WebRTC call outlives this instance: a survivor finds its provider session here (takeover.ts).
    if (answerSdp !== undefined) await rememberDirect(ctx, id, session.provider.id, maxDurationMs + TOKEN_GRACE_MS);
    await deps.sql.begin(async (tx) => {
      // One round trip for both rows and BEGIN (pipelined, in this order).
      const newConversation = {
        id: conversationId,
        assistantId: assistant.id,
        accountId,
        visitorId,
        source,
        callerNumber: row.callerNumber,
      };
      const rows = Promise.all([
        input.conversationId === undefined ? q.insertConversation(tx, newConversation) : undefined,
        q.insertActiveSession(tx, row),
      ]);
      // The stored-session hook's first statement goes in the same round trip, queued after the rows it reads (the
      // inserts above were handed to the connection first, and one connection runs statements in order).
      await Promise.all([rows, ctx.onSessionStored?.(tx, id, transportName)]);
    });
  } catch (err) {
    if (session.lease !== undefined) await ctx.ownership.release(session.lease).catch(() => undefined);
    await session.provider.close().catch(() => undefined);
    await ctx.quota.release(quotaRequest).catch(() => undefined);
    throw err;
  }

  ctx.sessions.set(id, session);
  ctx.supervisor.add(session);
  ctx.timelines.track(id, accountId, assistant.id, timeline);
  if (source === 'widget' && visitorId !== null) {
    await rememberVisitorCall(ctx, assistant.id, visitorId, id, maxDurationMs + 60_000).catch((err: unknown) =>
      log.warn({ err }, 'visitor index not written'),
    );
  }
  // The caller left while we started: nobody holds the token, so end it at once (settled like any other).
  if (caller.signal.aborted) void session.end('disconnected');

  const expiresAtMs = Date.now() + maxDurationMs + TOKEN_GRACE_MS;
  const controlToken = issueControlToken(deps.config.secretKey, id, expiresAtMs);
  log.info({ heartbeat: session.heartbeatDeclared, recording: recorded }, 'voice session started');
  return {
    sessionId: id,
    conversationId,
    ...(answerSdp === undefined
      ? { stream: transport.stream(publicBase, id, controlToken) }
      : { transport: { type: 'webrtc' as const, sdp: answerSdp } }),
    audio: { ...audio, channels: 1 },
    recording: { enabled: recorded, consented: input.recordingConsent === true },
    controlToken,
    ...(session.heartbeatDeclared ? { heartbeatIntervalMs: deps.config.VOICE_HEARTBEAT_INTERVAL_MS } : {}),
    playbackGate: true,
    expiresAt: new Date(expiresAtMs).toISOString(),
  };
}

/** Assistant lookups in flight per voice service, by who asks and for what (see {@link resolveAssistant}). */
const lookups = new WeakMap<VoiceContext, Map<string, Promise<Assistant>>>();

/**
 * The assistant a mint is for. Identical lookups running at the same time share one query: a burst of one
 * assistant's calls reads its row once per round trip instead of once per call, each answer as fresh as the query
 * that was already on its way when the caller arrived.
 */
function resolveAssistant(
  ctx: VoiceContext,
  principal: Principal | PhonePrincipal,
  assistantId: string,
): Promise<Assistant> {
  const key = `${principal.kind === 'keyless' ? '' : principal.accountId}\n${assistantId}`;
  let inFlight = lookups.get(ctx);
  if (inFlight === undefined) lookups.set(ctx, (inFlight = new Map()));
  const pending = inFlight.get(key);
  if (pending !== undefined) return pending;
  const lookup = (
    principal.kind === 'keyless'
      ? getAssistantByPublicId(ctx.deps.sql, assistantId)
      : getOwnedAssistant(ctx.deps.sql, principal, assistantId)
  ).finally(() => inFlight.delete(key));
  inFlight.set(key, lookup);
  return lookup;
}
