import type { WebSocket } from 'ws';
import type { Logger } from '../../log/index.js';
import type { VoiceClock } from './clock.js';
import { VoiceProviderError, VoiceProviderErrorCodes as Codes } from './errors.js';
import { GptLiveWire } from './gpt-live-wire.js';
import { readUsageSeconds } from './inbound.js';
import {
  MUTE_FRAME,
  UNMUTE_FRAME,
  buildBackendCommand,
  buildContentAppend,
  isLockConfirmed,
  type WireEvent,
} from './protocol.js';
import type { KeepaliveProbe, SharedTicker } from './shared-ticker.js';
import { emptySessionStats } from './types.js';
import type {
  VoiceBackendCommand,
  VoiceCloseReason,
  VoiceLinkState,
  VoiceSession,
  VoiceSessionClosed,
  VoiceSessionHandlers,
  VoiceSessionStats,
  VoiceUsage,
} from './types.js';

/** Re-attach delays after a sideband drop, all within the window; then the link is lost. */
export const SIDEBAND_REATTACH_DELAYS_MS = Object.freeze([0, 1000, 2000, 4000, 8000]);
export const SIDEBAND_REATTACH_WINDOW_MS = 15_000;
/** The sideband's keepalive interval (a silent sideband is pinged, and re-attached when the ping goes unanswered). */
export const SIDEBAND_PING_MS = 5000;

export interface SidebandDeps {
  /** `http(s)://…/v1/live/sessions`: hangup is `POST <base>/<id>/hangup`. */
  httpBase: string;
  /** `ws(s)://…/v1/live/sessions`: the sideband is `<base>/<id>/attach`. */
  wsBase: string;
  headers: Record<string, string>;
  lockTimeoutMs: number;
  closeTimeoutMs: number;
  reattachDelaysMs: readonly number[];
  reattachWindowMs: number;
  keepalive: SharedTicker<KeepaliveProbe> | undefined;
  clock: VoiceClock;
}

type Phase = 'attaching' | 'open' | 'reattaching' | 'closing' | 'done';

/**
 * A WebRTC session as Parley holds it: the caller's audio flows between the browser and the provider, and Parley
 * supervises over the server-only sideband WebSocket (`/v1/live/sessions/{id}/attach`): instructions, commentary and
 * mute go out; transcripts, delegations, cumulative usage, the caller's reflected audio and `session.closed` come in
 * (the wire is the primary's, `gpt-live-wire.ts`: same framing, same event_id dedupe across re-attaches). A dropped
 * sideband is re-attached at 0/1/2/4/8 s within 15 s (state `reconnecting` meanwhile); one that cannot be is `lost`.
 * Ending hangs the call up at the provider (`POST …/{id}/hangup`) and waits for its final usage on the sideband.
 */
export class SidebandSession implements VoiceSession {
  readonly lockConfirmed = true as const;
  state: VoiceLinkState = 'connecting';
  usage: VoiceUsage = { seconds: 0 };
  readonly stats: VoiceSessionStats = emptySessionStats();
  private phase: Phase = 'attaching';
  private readonly wire: GptLiveWire;
  private muted = false;
  private attempt = 0;
  private droppedAt = 0;
  private timer: unknown = undefined;
  private hungUp: Promise<void> | undefined;
  private settleStart: { resolve: () => void; reject: (e: VoiceProviderError) => void } | null = null;
  private closed: VoiceSessionClosed | undefined;
  private closeWaiters: ((closed: VoiceSessionClosed) => void)[] = [];
  private readonly probe: KeepaliveProbe = {
    probe: () => {
      if (this.phase === 'open' || this.phase === 'closing') this.wire.probe();
    },
  };

  constructor(
    private readonly deps: SidebandDeps,
    readonly id: string,
    private readonly h: VoiceSessionHandlers,
    private readonly log: Logger | undefined,
  ) {
    this.wire = new GptLiveWire(
      deps.headers,
      this.stats,
      h,
      {
        id: () => this.id,
        live: () => this.phase === 'open' || this.phase === 'closing',
        opened: (_ws: WebSocket) => undefined,
        started: (event) => this.onStarted(event),
        refused: (error) => this.onRefused(error),
        closed: () => this.onSocketClose(),
        usage: (raw) => {
          this.takeUsage(raw);
          this.h.onUsage?.(this.usage);
        },
        providerClosed: (reason, raw) => {
          this.takeUsage(raw);
          this.finish(reason, true, 'closed');
        },
        providerError: (error) => this.h.onError?.(error),
      },
      log,
    );
  }

  /** Attach the sideband and wait for `session.started` with the lock echoed (the lock timeout bounds it). */
  attach(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      this.settleStart = { resolve, reject };
      const abort = () => this.failStart(new VoiceProviderError(Codes.ABORTED, 'The voice session start was aborted.'));
      if (signal?.aborted) return abort();
      signal?.addEventListener('abort', abort, { once: true });
      this.timer = this.deps.clock.setTimeout(
        () =>
          this.failStart(
            new VoiceProviderError(
              Codes.UNCONFIRMED,
              'The voice provider did not confirm the data-channel lock in time.',
            ),
          ),
        this.deps.lockTimeoutMs,
      );
      this.wire.open(this.attachUrl());
    });
  }

  /** The caller's audio never passes through Parley on a WebRTC call. */
  sendAudio(): boolean {
    this.stats.audioFramesRefused++;
    return false;
  }

  mute(): void {
    this.muted = true;
    this.send(MUTE_FRAME);
  }

  unmute(): void {
    this.muted = false;
    this.send(UNMUTE_FRAME);
  }

  appendInstructions(text: string, delegationId: string | null = null): void {
    this.send(buildContentAppend('session.instructions.append', text, delegationId));
  }

  appendCommentary(text: string, delegationId: string | null = null): void {
    this.send(buildContentAppend('session.commentary.append', text, delegationId));
  }

  appendThinking(text: string, delegationId: string | null = null): void {
    this.send(buildContentAppend('session.thinking.append', text, delegationId));
  }

  sendToBackend(command: VoiceBackendCommand): void {
    this.send(buildBackendCommand(command));
  }

  /** Hang up at the provider and wait for `session.closed` (final usage) on the sideband, bounded. Idempotent. */
  close(): Promise<VoiceSessionClosed> {
    if (this.closed !== undefined) return Promise.resolve(this.closed);
    const waiting = new Promise<VoiceSessionClosed>((resolve) => this.closeWaiters.push(resolve));
    void this.hangup();
    if (this.phase === 'open') {
      this.phase = 'closing';
      this.clearTimer();
      this.timer = this.deps.clock.setTimeout(() => {
        this.log?.warn({ sessionId: this.id }, 'voice provider did not confirm the hangup; final usage unknown');
        this.finish('close_requested', false, 'closed');
      }, this.deps.closeTimeoutMs);
    } else if (this.phase === 'attaching') {
      this.failStart(new VoiceProviderError(Codes.ABORTED, 'The voice session was closed before it started.'));
    } else if (this.phase === 'reattaching') {
      this.finish('close_requested', false, 'closed');
    }
    return waiting;
  }

  /**
   * Let go of the sideband without ending the call: another instance took the session over (a newer ownership
   * generation), so this one closes its socket quietly: no hangup, no `onClosed`.
   */
  detach(): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.clearTimer();
    this.deps.keepalive?.delete(this.probe);
    this.wire.shut();
  }

  /** `POST …/{id}/hangup`, once (errors logged: the provider also ends a call whose caller left). */
  hangup(): Promise<void> {
    this.hungUp ??= fetch(`${this.deps.httpBase}/${encodeURIComponent(this.id)}/hangup`, {
      method: 'POST',
      headers: this.deps.headers,
      signal: AbortSignal.timeout(this.deps.closeTimeoutMs),
    }).then(
      async (res) => {
        await res.body?.cancel();
        if (!res.ok && res.status !== 404)
          this.log?.warn({ sessionId: this.id, status: res.status }, 'voice hangup refused');
      },
      (err: unknown) => this.log?.warn({ sessionId: this.id, err: String(err) }, 'voice hangup failed'),
    );
    return this.hungUp;
  }

  // ---- the wire's reports ------------------------------------------------------------------------------------

  private attachUrl(): string {
    return `${this.deps.wsBase}/${encodeURIComponent(this.id)}/attach`;
  }

  private onStarted(event: WireEvent): void {
    const session = event.session as { id?: unknown } | undefined;
    const confirmed = isLockConfirmed(event.session as Parameters<typeof isLockConfirmed>[0]);
    const sameSession = session?.id === this.id;
    if (this.phase === 'attaching') {
      if (!confirmed || !sameSession)
        return this.failStart(
          new VoiceProviderError(Codes.UNCONFIRMED, 'The voice provider did not confirm the data-channel lock.'),
        );
      this.becomeOpen();
      const settle = this.settleStart;
      this.settleStart = null;
      settle?.resolve();
      return;
    }
    if (this.phase !== 'reattaching') return;
    if (!confirmed || !sameSession) {
      const error = new VoiceProviderError(Codes.UNCONFIRMED, 'The re-attached session is not the locked one.', {
        fatal: true,
      });
      return this.lose(error);
    }
    this.stats.reconnects++;
    this.log?.info({ sessionId: this.id, attempts: this.attempt }, 'voice sideband re-attached');
    this.becomeOpen();
    if (this.muted) this.wire.sendIfOpen(MUTE_FRAME);
  }

  private onRefused(error: VoiceProviderError): void {
    if (this.phase === 'attaching') return this.failStart(error);
    if (this.phase !== 'reattaching') return;
    if (error.fatal && error.code !== Codes.REFUSED) return this.lose(error);
    this.scheduleAttempt();
  }

  private onSocketClose(): void {
    switch (this.phase) {
      case 'attaching':
        return this.failStart(
          new VoiceProviderError(Codes.UNAVAILABLE, 'The sideband closed before the session started.'),
        );
      case 'open':
        this.phase = 'reattaching';
        this.droppedAt = this.deps.clock.now();
        this.attempt = 0;
        this.log?.warn({ sessionId: this.id }, 'voice sideband dropped; re-attaching');
        this.setState('reconnecting');
        return this.scheduleAttempt();
      case 'reattaching':
        return this.scheduleAttempt();
      case 'closing':
        return this.finish('close_requested', false, 'closed');
      case 'done':
        return;
    }
  }

  private scheduleAttempt(): void {
    this.clearTimer();
    if (this.phase !== 'reattaching') return;
    const delay = this.deps.reattachDelaysMs[this.attempt];
    const elapsed = this.deps.clock.now() - this.droppedAt;
    if (delay === undefined || elapsed + delay > this.deps.reattachWindowMs) {
      const error = new VoiceProviderError(Codes.UNAVAILABLE, 'The voice sideband could not be re-attached in time.', {
        fatal: true,
      });
      return this.lose(error);
    }
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = undefined;
      if (this.phase !== 'reattaching') return;
      this.attempt++;
      this.wire.open(this.attachUrl());
      // An attach that opens but never re-announces the session counts as a failed attempt.
      this.timer = this.deps.clock.setTimeout(() => {
        this.wire.drop();
        this.scheduleAttempt();
      }, this.deps.lockTimeoutMs);
    }, delay);
  }

  private becomeOpen(): void {
    this.clearTimer();
    this.phase = 'open';
    this.attempt = 0;
    this.wire.markAlive();
    this.setState('connected');
    this.deps.keepalive?.add(this.probe);
  }

  private lose(error: VoiceProviderError): void {
    if (this.phase === 'done') return;
    this.log?.warn({ sessionId: this.id, code: error.code }, 'voice sideband lost');
    this.h.onError?.(error);
    this.finish('connection_lost', false, 'lost');
  }

  private failStart(error: VoiceProviderError): void {
    if (this.phase !== 'attaching') return;
    const settle = this.settleStart;
    this.settleStart = null;
    // The provider session exists (it answered the offer): hang it up so it stops billing.
    void this.hangup();
    this.finish('start_failed', false, 'closed');
    settle?.reject(error);
  }

  private finish(reason: VoiceCloseReason, usageFinal: boolean, state: 'closed' | 'lost'): void {
    if (this.phase === 'done') return;
    const wasAttaching = this.phase === 'attaching';
    this.phase = 'done';
    this.clearTimer();
    this.deps.keepalive?.delete(this.probe);
    this.wire.shut();
    // Control is gone (lost) or the provider closed on its own: make sure the call is hung up there too.
    if (!usageFinal || reason !== 'close_requested') void this.hangup();
    this.closed = { reason, usage: this.usage, usageFinal };
    this.setState(state);
    if (!wasAttaching) this.h.onClosed?.(this.closed);
    for (const waiter of this.closeWaiters) waiter(this.closed);
    this.closeWaiters = [];
  }

  private takeUsage(raw: unknown): void {
    const seconds = readUsageSeconds(raw);
    if (seconds !== undefined && seconds > this.usage.seconds) this.usage = { seconds };
  }

  private send(frame: string): void {
    if (this.phase === 'open') this.wire.sendIfOpen(frame);
  }

  private setState(state: VoiceLinkState): void {
    if (this.state === state) return;
    this.state = state;
    this.h.onStateChange?.(state);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
