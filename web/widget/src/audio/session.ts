/**
 * The browser side of a voice call's audio: the microphone (echo cancellation on) through the capture worklet into
 * 20 ms PCM16 frames at 24 kHz, and the assistant's audio through the playback worklet (jitter buffer) to the
 * speakers. The protocol (mint, media socket, gate, heartbeats) is VoiceCall's (sdk/src/voice); this is audio only.
 */
import { CAPTURE_PROCESSOR, PLAYBACK_PROCESSOR, type CaptureFrame, type PlaybackLevel } from './protocol.js';

export type MicrophoneProblem = 'denied' | 'missing' | 'unsupported';

/** Why the microphone or audio could not start, for the visitor message. */
export class AudioStartError extends Error {
  constructor(
    readonly problem: MicrophoneProblem,
    cause?: unknown,
  ) {
    super(`audio could not start: ${problem}`, { cause });
  }
}

export interface AudioSessionOptions {
  /** URL of the worklet module (/widget/v1/parley-audio.js on the script's origin). */
  workletUrl: string;
  onFrame: (pcm: Int16Array) => void;
  onLevel?: (level: PlaybackLevel) => void;
  /** Test builds (data-test): an AnalyserNode between the playback and the destination measures what is heard. */
  tap?: boolean;
}

/** Creates the AudioContext now (call it in the click handler: browsers let a user gesture start audio). */
export function createAudioContext(): AudioContext | undefined {
  const Ctor =
    globalThis.AudioContext ?? (globalThis as { webkitAudioContext?: typeof AudioContext }).webkitAudioContext;
  if (Ctor === undefined) return undefined;
  return new Ctor({ latencyHint: 'interactive' });
}

export class AudioSession {
  private muted = false;
  private analyser: AnalyserNode | undefined;
  /** WebRTC: the provider's voice, through a gain that is 0 while the playback gate is closed. */
  private remote: { element: HTMLAudioElement; source: MediaStreamAudioSourceNode; gain: GainNode } | undefined;
  private readonly tapData: Float32Array<ArrayBuffer> | undefined;

  private constructor(
    private readonly context: AudioContext,
    private readonly stream: MediaStream,
    private readonly capture: AudioWorkletNode,
    private readonly playback: AudioWorkletNode,
    tap: AnalyserNode | undefined,
  ) {
    this.analyser = tap;
    this.tapData = tap ? new Float32Array(tap.fftSize) : undefined;
  }

  /** Asks for the microphone, loads the worklets and wires the graph. Rejects with AudioStartError. */
  static async open(context: AudioContext | undefined, options: AudioSessionOptions): Promise<AudioSession> {
    if (
      context === undefined ||
      context.audioWorklet === undefined ||
      navigator.mediaDevices?.getUserMedia === undefined
    ) {
      throw new AudioStartError('unsupported');
    }
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
      });
    } catch (err) {
      const name = (err as { name?: string }).name;
      throw new AudioStartError(
        name === 'NotFoundError' || name === 'OverconstrainedError'
          ? 'missing'
          : name === 'NotAllowedError' || name === 'SecurityError'
            ? 'denied'
            : 'unsupported',
        err,
      );
    }
    try {
      await context.audioWorklet.addModule(options.workletUrl);
      if (context.state === 'suspended') await context.resume();
      const source = context.createMediaStreamSource(stream);
      // No outputs: the capture node is pulled by the graph without making a sound.
      const capture = new AudioWorkletNode(context, CAPTURE_PROCESSOR, {
        numberOfInputs: 1,
        numberOfOutputs: 0,
        channelCount: 1,
        channelCountMode: 'explicit',
      });
      const playback = new AudioWorkletNode(context, PLAYBACK_PROCESSOR, {
        numberOfInputs: 0,
        numberOfOutputs: 1,
        outputChannelCount: [1],
      });
      source.connect(capture);
      let tap: AnalyserNode | undefined;
      if (options.tap) {
        tap = context.createAnalyser();
        tap.fftSize = 2048;
        playback.connect(tap);
        tap.connect(context.destination);
      } else {
        playback.connect(context.destination);
      }
      const session = new AudioSession(context, stream, capture, playback, tap);
      capture.port.onmessage = (event: MessageEvent<CaptureFrame>) => {
        if (!session.muted && event.data.type === 'frame') options.onFrame(event.data.pcm);
      };
      playback.port.onmessage = (event: MessageEvent<PlaybackLevel>) => options.onLevel?.(event.data);
      return session;
    } catch (err) {
      stream.getTracks().forEach((track) => track.stop());
      throw new AudioStartError('unsupported', err);
    }
  }

  /** Queues assistant audio (PCM16LE 24 kHz). The bytes are copied, so the caller's buffer stays its own. */
  play(pcm: Uint8Array): void {
    const copy = pcm.slice().buffer;
    this.playback.port.postMessage({ type: 'audio', pcm: copy }, [copy]);
  }

  /** The microphone (a WebRTC call sends it to the provider itself). */
  get microphone(): MediaStream {
    return this.stream;
  }

  /**
   * WebRTC: play the provider's voice, muted until `setRemoteOpen(true)`. Chromium only feeds a remote stream into Web
   * Audio while a media element holds it, so a muted <audio> element holds it too.
   */
  playStream(stream: MediaStream, open: boolean): void {
    this.remote?.source.disconnect();
    const element = new Audio();
    element.muted = true;
    element.srcObject = stream;
    void element.play().catch(() => undefined);
    const source = this.context.createMediaStreamSource(stream);
    const gain = this.context.createGain();
    gain.gain.value = open ? 1 : 0;
    source.connect(gain);
    gain.connect(this.analyser ?? this.context.destination);
    this.remote = { element, source, gain };
  }

  /** WebRTC: the gate opened (the voice is heard) or closed (muted at once). */
  setRemoteOpen(open: boolean): void {
    if (this.remote !== undefined) this.remote.gain.gain.value = open ? 1 : 0;
  }

  /** Drops queued assistant audio at once (the gate closed). */
  flush(): void {
    this.playback.port.postMessage({ type: 'flush' });
  }

  /** Mutes the microphone locally too: no frames leave the page while muted. */
  setMuted(muted: boolean): void {
    this.muted = muted;
    for (const track of this.stream.getAudioTracks()) track.enabled = !muted;
  }

  /** RMS of what reaches the destination right now (test builds only). */
  tapRms(): number | undefined {
    if (this.analyser === undefined || this.tapData === undefined) return undefined;
    this.analyser.getFloatTimeDomainData(this.tapData);
    let sum = 0;
    for (const v of this.tapData) sum += v * v;
    return Math.sqrt(sum / this.tapData.length);
  }

  close(): void {
    this.stream.getTracks().forEach((track) => track.stop());
    this.remote?.source.disconnect();
    if (this.remote !== undefined) this.remote.element.srcObject = null;
    this.remote = undefined;
    this.capture.port.onmessage = null;
    this.playback.port.onmessage = null;
    this.capture.disconnect();
    this.playback.disconnect();
    this.analyser = undefined;
    void this.context.close().catch(() => undefined);
  }
}
