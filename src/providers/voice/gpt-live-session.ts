import type { WebSocket } from 'ws';
import type { Logger } from '../../log/index.js';
import type { GptLiveSessionDeps } from './gpt-live-deps.js';
import { GptLiveWire } from './gpt-live-wire.js';
import { emptySessionStats } from './types.js';
import type {
  VoiceBackendCommand,
  VoiceCloseReason,
  VoiceLinkState,
  VoiceSession,
  VoiceSessionClosed,
  VoiceSessionConfig,
  VoiceSessionHandlers,
  VoiceSessionStats,
  VoiceUsage,
} from './types.js';
import { VoiceProviderError, VoiceProviderErrorCodes as Codes } from './errors.js';
import { readUsageSeconds } from './inbound.js';
import {
  CLOSE_FRAME,
  appendFrameAudioBytes,
  MUTE_FRAME,
  UNMUTE_FRAME,
  buildBackendCommand,
  buildContentAppend,
  buildSessionStart,
  encodeAudioAppendFrame,
  isLockConfirmed,
  type WireEvent,
} from './protocol.js';
import { OutgoingQueue } from './outgoing-queue.js';
import { AppendCoalescer } from './append-coalescer.js';
import { stagingOf } from './audio-format.js';
import { residenceNow, type RelayResidence } from './residence.js';
import { isRecoverableCloseCode, nextReconnectDelay } from './reconnect-policy.js';

type Phase = 'starting' | 'open' | 'resuming' | 'closing' | 'done';

/**
 * One GPT-Live session over one primary WebSocket at a time. A dropped link is resumed by reconnecting with
 * `?session_id=<id>`; the provider answers `session.started` for that id and may replay recent events (delivered once:
 * event_id dedupe). Output audio has no event_id and is never replayed: a drop is a gap, never a repeat. This file is
 * the session's state (phases, lock, resume, close); `gpt-live-wire.ts` is the wire (socket, keepalive, dedupe).
 */
export class GptLiveSession implements VoiceSession {
  id = '';
  readonly lockConfirmed = true as const;
  state: VoiceLinkState = 'connecting';
  usage: VoiceUsage = { seconds: 0 };
  readonly stats: VoiceSessionStats = emptySessionStats();

  readonly residence: RelayResidence;
  private phase: Phase = 'starting';
  private readonly wire: GptLiveWire;
  private readonly queue: OutgoingQueue;
  /** Caller audio gathered only behind a write in flight (VOICE_PROVIDER_APPEND_MS); undefined: never held. */
  private readonly coalescer: AppendCoalescer | undefined;
  private muted = false;
  private fatal = false;
  private attempt = 0;
  private droppedAt = 0;
  private lastUsageAt = 0;
  private deadlineTimer: unknown = undefined;
  private reconnectTimer: unknown = undefined;
  /** Watched by the instance's keepalive ticker while open; probes the link only in the open phase. */
  private readonly keepaliveProbe = {
    probe: (): void => {
      if (this.phase === 'open') this.wire.probe();
    },
  };
  private startSettle: { resolve: (s: GptLiveSession) => void; reject: (e: VoiceProviderError) => void } | null = null;
  private closed: VoiceSessionClosed | undefined;
  private closeWaiters: ((closed: VoiceSessionClosed) => void)[] = [];
  private readonly h: VoiceSessionHandlers;

  constructor(
    private readonly deps: GptLiveSessionDeps,
    private readonly config: VoiceSessionConfig,
    handlers: VoiceSessionHandlers = {},
    private readonly log: Logger | undefined = deps.logger,
  ) {
    this.h = handlers;
    // The queue tells the coalescer when the link drained; the coalescer asks the queue whether it is idle.
    const flusher = deps.appendFlusher;
    const drained = flusher && ((): void => this.coalescer!.drained());
    this.queue = new OutgoingQueue(deps.highWaterBytes, deps.maxQueuedBytes, drained);
    const emit = (frame: Buffer): void => this.sendAppend(frame);
    this.coalescer = flusher && new AppendCoalescer(flusher, this.queue, emit, stagingOf(deps, config));
    this.residence = deps.residence;
    // The wire's view of this session: what it reports lands in the state machine below.
    this.wire = new GptLiveWire(
      deps.headers,
      this.stats,
      handlers,
      {
        id: () => this.id,
        live: () => this.phase === 'open' || this.phase === 'closing',
        opened: (ws) => this.onOpen(ws),
        started: (event) => this.onStarted(event),
        refused: (error) => this.onLinkRefused(error),
        closed: (code) => this.onSocketClose(code),
        usage: (raw) => {
          this.takeUsage(raw);
          this.h.onUsage?.(this.usage);
        },
        providerClosed: (reason, rawUsage) => {
          this.takeUsage(rawUsage);
          this.finish(reason, true, 'closed');
        },
        providerError: (error) => {
          if (error.fatal) this.fatal = true;
          this.h.onError?.(error);
        },
      },
      log,
      deps.residence,
    );
  }

  /** Open the link and wait for a confirmed lock. Resolves with this session or rejects with a VoiceProviderError. */
  start(signal?: AbortSignal): Promise<GptLiveSession> {
    return new Promise((resolve, reject) => {
      this.startSettle = { resolve, reject };
      if (signal?.aborted)
        return this.failStart(new VoiceProviderError(Codes.ABORTED, 'The voice session start was aborted.'));
      signal?.addEventListener(
        'abort',
        () => this.failStart(new VoiceProviderError(Codes.ABORTED, 'The voice session start was aborted.')),
        { once: true },
      );
      this.deadlineTimer = this.deps.clock.setTimeout(() => {
        this.failStart(
          new VoiceProviderError(
            Codes.UNCONFIRMED,
            'The voice provider did not confirm the data-channel lock in time.',
          ),
        );
      }, this.deps.lockTimeoutMs);
      this.wire.open(this.deps.url);
    });
  }

  sendAudio(pcm: Buffer, readAt = Number.NaN): boolean {
    if (this.phase !== 'open') {
      this.stats.audioFramesRefused++;
      return false;
    }
    this.stats.audioFramesSent++;
    if (this.coalescer !== undefined) this.coalescer.push(pcm, readAt);
    else {
      this.sendAppend(encodeAudioAppendFrame(pcm)); // passthrough: read to socket is all working time
      if (readAt === readAt) this.residence.callerToProvider.observeMs(residenceNow() - readAt);
    }
    this.stats.audioFramesDropped = this.queue.dropped;
    return true;
  }

  private sendAppend(frame: Buffer): void {
    this.queue.push(frame, true);
    this.h.onAudioSent?.(appendFrameAudioBytes(frame));
  }

  mute(): void {
    this.muted = true;
    this.sendControl(MUTE_FRAME);
  }

  unmute(): void {
    this.muted = false;
    this.sendControl(UNMUTE_FRAME);
  }

  appendInstructions(text: string, delegationId: string | null = null): void {
    this.sendControl(buildContentAppend('session.instructions.append', text, delegationId));
  }

  appendCommentary(text: string, delegationId: string | null = null): void {
    this.sendControl(buildContentAppend('session.commentary.append', text, delegationId));
  }

  appendThinking(text: string, delegationId: string | null = null): void {
    this.sendControl(buildContentAppend('session.thinking.append', text, delegationId));
  }

  sendToBackend = (command: VoiceBackendCommand): void => this.sendControl(buildBackendCommand(command));

  close(): Promise<VoiceSessionClosed> {
    if (this.closed !== undefined) return Promise.resolve(this.closed);
    const waiting = new Promise<VoiceSessionClosed>((resolve) => this.closeWaiters.push(resolve));
    if (this.phase === 'open') {
      this.phase = 'closing';
      this.coalescer?.flush();
      this.queue.push(CLOSE_FRAME, false);
      this.clearDeadline();
      this.deadlineTimer = this.deps.clock.setTimeout(() => {
        this.log?.warn({ sessionId: this.id }, 'voice provider did not confirm close; final usage unknown');
        this.finish('close_requested', false, 'closed');
      }, this.deps.closeTimeoutMs);
    } else if (this.phase === 'starting') {
      this.failStart(new VoiceProviderError(Codes.ABORTED, 'The voice session was closed before it started.'));
    } else if (this.phase === 'resuming') {
      // Nobody to tell: the provider ends the detached session when its own resume window lapses.
      this.finish('close_requested', false, 'closed');
    }
    return waiting;
  }

  // ---- link events (from the wire) ----------------------------------------------------------------------

  private onOpen(ws: WebSocket): void {
    // A fresh start sends session.start; a resume waits for the provider to re-announce the session it kept.
    if (this.phase === 'starting') ws.send(JSON.stringify(buildSessionStart(this.config, this.deps.defaultModel)));
  }

  private onSocketClose(code: number): void {
    this.coalescer?.discard();
    this.queue.detach();
    this.stats.audioFramesDropped = this.queue.dropped;
    switch (this.phase) {
      case 'starting':
        return this.failStart(
          new VoiceProviderError(Codes.UNAVAILABLE, 'The voice provider link closed before the session started.'),
        );
      case 'open':
        if (!this.fatal && isRecoverableCloseCode(code)) return this.beginReconnect(code);
        this.log?.warn({ sessionId: this.id, code }, 'voice provider link closed');
        return this.lose(
          new VoiceProviderError(Codes.UNAVAILABLE, 'The voice provider closed the link.', { fatal: true }),
        );
      case 'resuming':
        return this.scheduleAttempt();
      case 'closing':
        return this.finish('close_requested', false, 'closed');
      case 'done':
        return;
    }
  }

  private onLinkRefused(error: VoiceProviderError): void {
    if (this.phase === 'starting') return this.failStart(error);
    if (this.phase !== 'resuming') return;
    if (error.fatal) return this.lose(error);
    this.scheduleAttempt();
  }

  private takeUsage(raw: unknown): void {
    const seconds = readUsageSeconds(raw);
    if (seconds === undefined) return;
    const now = this.deps.clock.now();
    const gain = seconds - this.usage.seconds;
    // Cumulative values never go backwards; a big forward jump is reported (it is what will be billed) but logged.
    if (gain > 2 * ((now - this.lastUsageAt) / 1000) + 5)
      this.log?.warn({ sessionId: this.id, gainSeconds: gain }, 'voice provider usage jumped');
    this.lastUsageAt = now;
    if (seconds > this.usage.seconds) this.usage = { seconds };
  }

  private onStarted(event: WireEvent): void {
    const session = event.session as { id?: unknown } | undefined;
    const id = typeof session?.id === 'string' ? session.id : '';
    const confirmed = isLockConfirmed(event.session as Parameters<typeof isLockConfirmed>[0]);
    if (this.phase === 'starting') {
      if (!confirmed || id === '') {
        this.id = id;
        return this.failStart(
          new VoiceProviderError(Codes.UNCONFIRMED, 'The voice provider did not confirm the data-channel lock.'),
        );
      }
      this.id = id;
      this.lastUsageAt = this.deps.clock.now();
      this.becomeOpen();
      const settle = this.startSettle;
      this.startSettle = null;
      settle?.resolve(this);
      return;
    }
    if (this.phase !== 'resuming') return;
    if (id !== this.id || !confirmed) {
      return this.lose(
        new VoiceProviderError(Codes.UNCONFIRMED, 'The resumed voice session is not the locked one.', { fatal: true }),
      );
    }
    this.stats.reconnects++;
    this.log?.info({ sessionId: this.id, attempts: this.attempt }, 'voice provider link resumed');
    this.becomeOpen();
    if (this.muted) this.queue.push(MUTE_FRAME, false);
  }

  // ---- state transitions ---------------------------------------------------------------------------------

  private becomeOpen(): void {
    this.clearDeadline();
    this.phase = 'open';
    this.attempt = 0;
    this.wire.markAlive();
    const ws = this.wire.ws;
    if (ws !== null) this.queue.attach(ws);
    this.setState('connected');
    this.deps.keepalive?.add(this.keepaliveProbe);
  }

  private beginReconnect(code: number): void {
    this.phase = 'resuming';
    this.droppedAt = this.deps.clock.now();
    this.attempt = 0;
    this.log?.warn({ sessionId: this.id, code }, 'voice provider link dropped; resuming');
    this.setState('reconnecting');
    this.scheduleAttempt();
  }

  private scheduleAttempt(): void {
    this.clearDeadline();
    if (this.phase !== 'resuming') return;
    const delay = nextReconnectDelay(this.attempt, this.deps.clock.now() - this.droppedAt, {
      initialDelayMs: this.deps.reconnectInitialDelayMs,
      maxDelayMs: this.deps.reconnectMaxDelayMs,
      windowMs: this.deps.reconnectWindowMs,
    });
    if (delay === undefined) {
      return this.lose(
        new VoiceProviderError(Codes.UNAVAILABLE, 'The voice provider link could not be resumed in time.', {
          fatal: true,
        }),
      );
    }
    this.reconnectTimer = this.deps.clock.setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.phase !== 'resuming') return;
      this.attempt++;
      const url = new URL(this.deps.url);
      url.searchParams.set('session_id', this.id);
      this.wire.open(url.toString());
      // A socket that opens but never re-announces the session counts as a failed attempt.
      this.deadlineTimer = this.deps.clock.setTimeout(() => {
        this.wire.drop();
        this.scheduleAttempt();
      }, this.deps.lockTimeoutMs);
    }, delay);
  }

  private lose(error: VoiceProviderError): void {
    if (this.phase === 'done') return;
    this.log?.warn(
      { sessionId: this.id, code: error.code, providerStatus: error.providerStatus },
      'voice provider link lost',
    );
    this.h.onError?.(error);
    this.finish('connection_lost', false, 'lost');
  }

  private failStart(error: VoiceProviderError): void {
    if (this.phase !== 'starting') return;
    this.log?.warn(
      { sessionId: this.id || undefined, code: error.code, providerStatus: error.providerStatus },
      'voice provider session did not start',
    );
    const settle = this.startSettle;
    this.startSettle = null;
    // Tell a provider that did start (unconfirmed lock) to stop billing; no need to wait for its answer.
    if (this.id !== '') this.wire.sendIfOpen(CLOSE_FRAME);
    this.finish('start_failed', false, 'closed');
    settle?.reject(error);
  }

  private finish(reason: VoiceCloseReason, usageFinal: boolean, state: 'closed' | 'lost'): void {
    if (this.phase === 'done') return;
    const wasStarting = this.phase === 'starting';
    this.phase = 'done';
    this.clearDeadline();
    if (this.reconnectTimer !== undefined) this.deps.clock.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.deps.keepalive?.delete(this.keepaliveProbe);
    this.coalescer?.discard();
    this.queue.clear();
    this.wire.shut();
    this.closed = { reason, usage: this.usage, usageFinal };
    this.setState(state);
    // A session that never started was never handed out: its caller learns from the rejected start instead.
    if (!wasStarting) this.h.onClosed?.(this.closed);
    for (const waiter of this.closeWaiters) waiter(this.closed);
    this.closeWaiters = [];
  }

  private sendControl(frame: string): void {
    // Staged caller audio goes first: the provider hears what was said before a mute or an instruction.
    if (this.phase === 'open') this.coalescer?.flush();
    if (this.phase === 'open' || this.phase === 'resuming') this.queue.push(frame, false);
  }

  private setState(state: VoiceLinkState): void {
    if (this.state === state) return;
    this.state = state;
    this.h.onStateChange?.(state);
  }

  private clearDeadline(): void {
    if (this.deadlineTimer !== undefined) this.deps.clock.clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
  }
}
