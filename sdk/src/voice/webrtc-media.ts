/**
 * The browser side of a WebRTC call: a peer connection to the voice provider, carrying the microphone up and the
 * assistant's voice down (echo cancellation and jitter handling are the browser's). Parley only passes the SDP: the
 * offer goes in the mint's `transport`, the provider's answer comes back in it. The peer also opens the provider's
 * data channel, on which the session allows no client events at all: this side never sends there.
 */
import type { RtcMediaStream, RtcPeer, RtcPeerConstructor, RtcTrack, Transcript, WebRtcMediaOptions } from './types.js';

const browser = globalThis as {
  RTCPeerConnection?: RtcPeerConstructor;
  MediaStream?: new (t: RtcTrack[]) => RtcMediaStream;
};

/** WebRTC could not be used (no RTCPeerConnection, no offer, or ICE did not connect in time): fall back to WebSocket. */
export class WebRtcUnavailableError extends Error {
  readonly code = 'WEBRTC_UNAVAILABLE';
  constructor(message: string) {
    super(message);
    this.name = 'WebRtcUnavailableError';
  }
}

export function webRtcSupported(impl?: RtcPeerConstructor): boolean {
  return (impl ?? browser.RTCPeerConnection) !== undefined;
}

export interface WebRtcMediaEvents {
  /** The assistant's voice arrived (a MediaStream to play while the gate is open). */
  remote(stream: RtcMediaStream): void;
  /** ICE connected or went away. */
  link(connected: boolean): void;
  /** Captions the provider sends on its data channel (this side only reads it). */
  transcript(t: Transcript): void;
}

const TRANSCRIPTS: Record<string, Transcript['role']> = {
  'session.input_transcript.delta': 'user',
  'session.output_transcript.delta': 'assistant',
};

export class WebRtcMedia {
  readonly pc: RtcPeer;
  /** The assistant's voice (set once the provider's track arrived). */
  remote: RtcMediaStream | undefined;
  private closed = false;

  constructor(
    private readonly options: WebRtcMediaOptions,
    events: WebRtcMediaEvents,
  ) {
    const Impl = options.RTCPeerConnection ?? browser.RTCPeerConnection;
    if (Impl === undefined) throw new WebRtcUnavailableError('This browser has no RTCPeerConnection.');
    this.pc = new Impl();
    for (const track of options.microphone.getAudioTracks()) this.pc.addTrack(track, options.microphone);
    const channel = this.pc.createDataChannel('oai-events');
    channel.onmessage = (event) => {
      const t = transcriptOf(event.data);
      if (t !== undefined) events.transcript(t);
    };
    this.pc.ontrack = (event) => {
      const stream = event.streams[0] ?? (browser.MediaStream ? new browser.MediaStream([event.track]) : undefined);
      if (stream === undefined) return;
      this.remote = stream;
      events.remote(stream);
    };
    this.pc.oniceconnectionstatechange = () => events.link(this.connected);
  }

  get connected(): boolean {
    const s = this.pc.iceConnectionState;
    return s === 'connected' || s === 'completed';
  }

  /** The complete offer (ICE gathered, or what was gathered when gatherTimeoutMs ran out). */
  async offer(): Promise<string> {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    await new Promise<void>((resolve) => {
      if (this.pc.iceGatheringState === 'complete') return resolve();
      const timer = setTimeout(resolve, this.options.gatherTimeoutMs ?? 2000);
      this.pc.addEventListener('icegatheringstatechange', () => {
        if (this.pc.iceGatheringState !== 'complete') return;
        clearTimeout(timer);
        resolve();
      });
    });
    const sdp = this.pc.localDescription?.sdp;
    if (!sdp) throw new WebRtcUnavailableError('No WebRTC offer could be made.');
    return sdp;
  }

  /** Apply the provider's answer and wait for ICE to connect (connectTimeoutMs), else WebRtcUnavailableError. */
  async connect(answerSdp: string): Promise<void> {
    await this.pc.setRemoteDescription({ type: 'answer', sdp: answerSdp });
    if (this.connected) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new WebRtcUnavailableError('The WebRTC connection did not connect in time.')),
        this.options.connectTimeoutMs ?? 3000,
      );
      this.pc.addEventListener('iceconnectionstatechange', () => {
        if (this.connected) {
          clearTimeout(timer);
          resolve();
        } else if (this.pc.iceConnectionState === 'failed' || this.pc.iceConnectionState === 'closed') {
          clearTimeout(timer);
          reject(new WebRtcUnavailableError('The WebRTC connection failed.'));
        }
      });
    });
  }

  /** Mute here: the microphone's tracks stop carrying sound (the provider hears silence). */
  setMuted(muted: boolean): void {
    for (const track of this.options.microphone.getAudioTracks()) track.enabled = !muted;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pc.close();
  }
}

/** A transcript delta from the provider's data channel; undefined for anything else. */
function transcriptOf(data: unknown): Transcript | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const e = JSON.parse(data) as { type?: string; delta?: unknown; start_ms?: unknown; end_ms?: unknown };
    const role = TRANSCRIPTS[e.type ?? ''];
    if (role === undefined || typeof e.delta !== 'string') return undefined;
    const startMs = typeof e.start_ms === 'number' ? e.start_ms : 0;
    return { role, text: e.delta, startMs, endMs: typeof e.end_ms === 'number' ? e.end_ms : startMs };
  } catch {
    return undefined;
  }
}
