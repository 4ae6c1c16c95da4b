import type { WebSocket } from 'ws';
import { OUTPUT_AUDIO_PREFIX, OUTPUT_AUDIO_SUFFIX } from './events.js';
import type { SimPeer } from './webrtc-peer.js';

type Listener = (...args: unknown[]) => void;

const STARTED = '"type":"session.started"';

/**
 * What a WebRTC session's SimSession talks to in place of a primary WebSocket: it hears the caller through the peer
 * (`hear`), its speech goes to the peer as RTP, and every event goes to the sideband currently attached (at most one:
 * a new attach replaces the older). While no sideband is attached the session goes on (the caller keeps talking);
 * events with an event_id are kept in a ring and replayed after `session.started` on the next attach, so a client
 * that re-attaches must deduplicate. Caller audio is reflected to the sideband as `session.input_audio.append`
 * (PCM16 24 kHz), the assistant's as `session.output_audio.delta`, as the provider does.
 */
export class SidebandHub {
  readonly OPEN = 1;
  readyState = 1;
  sideband: WebSocket | null = null;
  attaches = 0;
  private readonly listeners = new Map<string, Listener[]>();
  private startedFrame: string | undefined;
  private ring: string[] = [];
  private ended = false;

  constructor(
    readonly peer: SimPeer,
    private readonly replayCount: number,
  ) {}

  // ---- the WebSocket surface SimSession uses -----------------------------------------------------------------

  on(event: string, listener: Listener): this {
    const list = this.listeners.get(event) ?? [];
    list.push(listener);
    this.listeners.set(event, list);
    return this;
  }

  send(frame: string | Buffer): void {
    if (typeof frame === 'string') {
      if (frame.startsWith(OUTPUT_AUDIO_PREFIX)) {
        const b64 = frame.slice(OUTPUT_AUDIO_PREFIX.length, frame.length - OUTPUT_AUDIO_SUFFIX.length);
        this.peer.send(Buffer.from(b64, 'base64'));
      } else if (frame.includes(STARTED)) {
        this.startedFrame = frame;
      } else if (frame.includes('"event_id"')) {
        // Captions reach the browser on its data channel too (the provider's server events; it may send none).
        if (frame.includes('_transcript.delta"')) this.peer.sendEvent(frame);
        this.ring.push(frame);
        if (this.ring.length > this.replayCount) this.ring.shift();
      }
    }
    const ws = this.sideband;
    if (ws !== null && ws.readyState === ws.OPEN) ws.send(frame);
  }

  /** The drop fault: cut the attached sideband (no close frame); the session goes on. */
  terminate(): void {
    const ws = this.sideband;
    this.sideband = null;
    ws?.terminate();
  }

  /** The session ended (after session.closed went out): close the sideband and the caller's peer. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.readyState = 3;
    const ws = this.sideband;
    this.sideband = null;
    ws?.close(1000);
    this.peer.close();
    for (const listener of this.listeners.get('close') ?? []) listener(1000);
  }

  pause(): void {}
  resume(): void {}

  // ---- the simulator's side ----------------------------------------------------------------------------------

  /** A sideband attached: `session.started`, then (re-attach) the replay ring; its client events reach the session. */
  attach(ws: WebSocket): void {
    const previous = this.sideband;
    this.sideband = ws;
    previous?.terminate();
    const reattach = this.attaches++ > 0;
    if (this.startedFrame !== undefined) ws.send(this.startedFrame);
    if (reattach) for (const frame of this.ring) ws.send(frame);
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (ws === this.sideband) this.deliver(data, isBinary);
    });
    ws.on('close', () => {
      if (ws === this.sideband) this.sideband = null;
    });
  }

  /** Caller audio from the peer: the session hears it and the sideband gets its reflection. */
  hear(pcm24k: Buffer, hearer: (base64: string) => void): void {
    if (this.ended) return;
    const b64 = pcm24k.toString('base64');
    hearer(b64);
    const ws = this.sideband;
    if (ws !== null && ws.readyState === ws.OPEN) ws.send(`{"type":"session.input_audio.append","audio":"${b64}"}`);
  }

  /** Parley's hangup: the session closes as if the sideband had sent `session.close`. */
  hangup(): void {
    this.deliver(Buffer.from('{"type":"session.close"}'), false);
  }

  private deliver(data: Buffer, isBinary: boolean): void {
    for (const listener of this.listeners.get('message') ?? []) listener(data, isBinary);
  }
}
