/**
 * The browser side of a WebRTC call: a peer connection to the voice provider, carrying the microphone up and the
 * assistant's voice down (echo cancellation and jitter handling are the browser's). Parley only passes the SDP: the
 * offer goes in the mint's `transport`, the provider's answer comes back in it. The peer also opens the provider's
 * data channel, on which the session allows no client events at all: this side never sends there.
 */
export interface WebRtcMediaOptions {
  /** The microphone (getUserMedia), its audio tracks sent to the provider. */
  microphone: MediaStream;
  /** ICE must connect within this long after the answer, or the call counts as WebRTC-unavailable. Default 3000. */
  connectTimeoutMs?: number;
  /** Offer without waiting longer than this for ICE gathering (the offer carries what was gathered). Default 2000. */
  gatherTimeoutMs?: number;
  RTCPeerConnection?: typeof RTCPeerConnection;
}

/** WebRTC could not be used (no RTCPeerConnection, no offer, or ICE did not connect in time): fall back to WebSocket. */
export class WebRtcUnavailableError extends Error {
  readonly code = 'WEBRTC_UNAVAILABLE';
  constructor(message: string) {
    super(message);
    this.name = 'WebRtcUnavailableError';
  }
}

export function webRtcSupported(impl?: typeof RTCPeerConnection): boolean {
  return (impl ?? (globalThis as { RTCPeerConnection?: typeof RTCPeerConnection }).RTCPeerConnection) !== undefined;
}

export class WebRtcMedia {
  readonly pc: RTCPeerConnection;
  /** The assistant's voice (set once the provider's track arrived). */
  remote: MediaStream | undefined;
  private closed = false;

  constructor(
    private readonly options: WebRtcMediaOptions,
    private readonly onRemote: (stream: MediaStream) => void,
    private readonly onLinkChange: (connected: boolean) => void,
  ) {
    const Impl = options.RTCPeerConnection ?? globalThis.RTCPeerConnection;
    if (Impl === undefined) throw new WebRtcUnavailableError('This browser has no RTCPeerConnection.');
    this.pc = new Impl();
    for (const track of options.microphone.getAudioTracks()) this.pc.addTrack(track, options.microphone);
    this.pc.createDataChannel('oai-events');
    this.pc.ontrack = (event) => {
      this.remote = event.streams[0] ?? new MediaStream([event.track]);
      this.onRemote(this.remote);
    };
    this.pc.oniceconnectionstatechange = () => this.onLinkChange(this.connected);
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
