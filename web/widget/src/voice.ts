/**
 * One voice call of the widget: the SDK's VoiceCall (the one voice protocol client: mint, media socket, gate stream,
 * heartbeats, end) joined to the browser's audio (AudioSession). The gate is honoured here once more: assistant
 * audio is played and assistant captions are shown only while it is open, and closing it drops what is queued.
 */
import { ParleyError, VoiceCall, WebRtcUnavailableError, webRtcSupported, type Transcript } from '@parley/sdk';
import { AudioSession, AudioStartError } from './audio/session.js';
import { joinText } from './dom.js';
import { micLevel } from './mic-level.js';
import { describeError } from './errors.js';
import { endMessages, errorMessages, visibleEndReason } from './messages.js';
import type { TestHook } from './test-hook.js';

export type VoiceState =
  'idle' | 'connecting' | 'listening' | 'thinking' | 'speaking' | 'reconnecting' | 'ended' | 'error';

/** What the element learns from a call. */
export interface VoiceHost {
  state(state: VoiceState): void;
  /** A caption grew (final false), or is complete (final true). */
  caption(role: Transcript['role'], text: string, final: boolean): void;
  /** The call is over: the end reason visitors see (null: they hung up) and the neutral message for it. */
  ended(endReason: string | null, message: string): void;
  /** The call could not start: a stable code and a neutral message. */
  failed(code: string, message: string): void;
  test(): TestHook | undefined;
  /** The call's transport is known (and whether WebRTC was tried first and given up). */
  transport(transport: 'webrtc' | 'websocket', fellBack: boolean): void;
  /** The microphone's level, 0-1, about every 60 ms while a call hears it (0 when muted or over). */
  level(value: number): void;
}

/** `auto`: WebRTC first, the WebSocket relay when WebRTC is unavailable or has not connected within 3 s. */
export type TransportChoice = 'auto' | 'webrtc' | 'websocket';

type Outcome = { kind: 'ok'; conversationId: string } | { kind: 'fallback' } | { kind: 'failed'; err: unknown };

export interface VoiceStart {
  context: AudioContext | undefined;
  workletUrl: string;
  server: string;
  assistantId: string;
  visitorId: string;
  signature: string | undefined;
  conversationId: string | undefined;
  recordingConsent: boolean;
  source: 'widget' | 'playground';
  transport: TransportChoice;
  /** The transports the server's voice takes (its widget config); one it does not take is never tried. */
  transports: ReadonlyArray<'webrtc' | 'websocket'>;
}

export class VoiceController {
  private call: VoiceCall | undefined;
  private audio: AudioSession | undefined;
  private gateOpen = false;
  private caption: { role: Transcript['role']; text: string } | undefined;
  private tapTimer: ReturnType<typeof setInterval> | undefined;
  /** Microphone frames seen (the level bar is updated every third, about every 60 ms). */
  private frames = 0;
  /** end() while the microphone was being asked for: the call must not start afterwards. */
  private cancelled = false;
  muted = false;
  /** The server refused WebRTC for this voice (a config that did not say): later calls go straight to the relay. */
  private webRtcRefused = false;

  constructor(private readonly host: VoiceHost) {}

  get active(): boolean {
    return this.call !== undefined;
  }

  /** Microphone and worklets first (a refusal costs no session), then the call. Resolves the conversation id. */
  async start(o: VoiceStart): Promise<string | undefined> {
    const hook = this.host.test();
    this.muted = false;
    this.cancelled = false;
    try {
      this.audio = await AudioSession.open(o.context, {
        workletUrl: o.workletUrl,
        onFrame: (pcm) => {
          this.call?.sendAudio(pcm);
          if (++this.frames % 3 === 0) this.host.level(micLevel(pcm));
        },
        tap: hook !== undefined,
      });
    } catch (err) {
      void o.context?.close();
      const problem = err instanceof AudioStartError ? err.problem : 'unsupported';
      if (problem === 'denied') this.host.failed('MICROPHONE_DENIED', errorMessages.microphoneDenied);
      else if (problem === 'missing') this.host.failed('MICROPHONE_MISSING', errorMessages.microphoneMissing);
      else this.host.failed('AUDIO_UNSUPPORTED', errorMessages.audioUnsupported);
      return undefined;
    }
    if (this.cancelled) {
      this.release();
      this.host.ended(null, endMessages['client']!);
      return undefined;
    }
    const rtc =
      o.transport !== 'websocket' && o.transports.includes('webrtc') && !this.webRtcRefused && webRtcSupported();
    let outcome: Outcome | undefined;
    if (rtc) outcome = await this.run(o, 'webrtc');
    if (outcome === undefined || (outcome.kind === 'fallback' && o.transport === 'auto' && !this.cancelled)) {
      this.host.transport('websocket', rtc);
      outcome = await this.run(o, 'websocket');
    }
    if (outcome.kind === 'ok') return outcome.conversationId;
    this.release();
    const err = outcome.kind === 'failed' ? outcome.err : new WebRtcUnavailableError('WebRTC did not connect.');
    this.host.failed(...describeError(err, true));
    return undefined;
  }

  /** One call over one transport. A WebRTC call that cannot connect (or is refused) asks for the fallback. */
  private async run(o: VoiceStart, transport: 'webrtc' | 'websocket'): Promise<Outcome> {
    const hook = this.host.test();
    if (transport === 'webrtc') this.host.transport('webrtc', false);
    const call = new VoiceCall({
      baseUrl: o.server,
      assistantId: o.assistantId,
      visitorId: o.visitorId,
      source: o.source,
      capabilities: ['heartbeat', 'playback_gate'],
      recordingConsent: o.recordingConsent,
      ...(o.signature !== undefined ? { signature: o.signature } : {}),
      ...(o.conversationId !== undefined ? { conversationId: o.conversationId } : {}),
      ...(transport === 'webrtc' && this.audio ? { transport, microphone: this.audio.microphone } : {}),
    });
    this.call = call;
    this.gateOpen = false;
    call.on('state', ({ state }) => {
      this.syncGate(call);
      if (state !== 'ended' && state !== 'error') this.host.state(state);
    });
    call.on('gate', () => this.syncGate(call));
    call.on('audio', (pcm) => {
      if (call.isGateOpen) this.audio?.play(pcm);
    });
    // WebRTC: the provider's voice, heard only while the gate is open (its gain follows the gate).
    call.on('remoteAudio', (stream) => this.audio?.playStream(stream as MediaStream, call.isGateOpen));
    call.on('transcript', (t) => {
      // Assistant captions only while the gate is open (the service withholds them too; docs/voice-protocol.md, the
      // playback gate).
      if (t.role === 'assistant' && !call.isGateOpen) return;
      this.addCaption(t.role, t.text);
    });
    call.on('ended', ({ endReason }) => {
      if (this.call !== call) return;
      this.release();
      const visible = visibleEndReason(endReason);
      this.host.ended(visible === 'client' ? null : visible, endMessages[visible]!);
    });
    if (hook !== undefined && this.tapTimer === undefined) {
      hook.calls++;
      this.tapTimer = setInterval(() => hook.sample(this.audio?.tapRms()), 50);
    }
    try {
      const minted = await call.start();
      if (hook !== undefined) hook.session = { sessionId: minted.sessionId, controlToken: minted.controlToken };
      return { kind: 'ok', conversationId: minted.conversationId };
    } catch (err) {
      if (this.call !== call) return { kind: 'failed', err };
      this.call = undefined;
      const unsupported = err instanceof ParleyError && err.code === 'VOICE_TRANSPORT_UNSUPPORTED';
      if (unsupported) this.webRtcRefused = true;
      const refused = err instanceof ParleyError && (err.status === 502 || unsupported);
      if (transport === 'webrtc' && (err instanceof WebRtcUnavailableError || refused)) return { kind: 'fallback' };
      return { kind: 'failed', err };
    }
  }

  /** Hangs up; resolves once the service confirmed (or could not be reached). */
  async end(): Promise<void> {
    this.cancelled = true;
    await this.call?.end();
  }

  /** Page unload: a keepalive end request that outlives the page. */
  endOnUnload(): void {
    this.call?.endOnUnload();
  }

  /** Mutes the microphone here (no frames leave the page) and at the service. Returns the new muted state. */
  toggleMute(): boolean {
    if (this.call === undefined) return this.muted;
    this.muted = !this.muted;
    this.audio?.setMuted(this.muted);
    if (this.muted) this.host.level(0);
    if (this.muted) this.call.mute();
    else this.call.unmute();
    return this.muted;
  }

  private syncGate(call: VoiceCall): void {
    const open = call.isGateOpen;
    if (open === this.gateOpen) return;
    this.gateOpen = open;
    this.host.test()?.record('gate', open ? 'open' : 'closed');
    this.audio?.setRemoteOpen(open);
    // Closed: nothing queued may still be heard.
    if (!open) this.audio?.flush();
  }

  private addCaption(role: Transcript['role'], delta: string): void {
    if (this.caption?.role !== role) this.finishCaption();
    const caption = (this.caption ??= { role, text: '' });
    caption.text = joinText(caption.text, delta);
    this.host.test()?.record('caption', `${role}:${this.gateOpen ? 'open' : 'closed'}`);
    this.host.caption(role, caption.text, false);
  }

  private finishCaption(): void {
    const caption = this.caption;
    if (caption === undefined) return;
    this.caption = undefined;
    this.host.caption(caption.role, caption.text, true);
  }

  private release(): void {
    this.finishCaption();
    this.call = undefined;
    this.audio?.close();
    this.audio = undefined;
    this.gateOpen = false;
    clearInterval(this.tapTimer);
    this.host.level(0);
  }
}
