import {
  bytesPerMs,
  bytesPerSample,
  DEFAULT_AUDIO_FORMAT,
  type VoiceAudioFormat,
} from '../../providers/voice/index.js';

export interface RelayOptions {
  /** Largest caller audio frame (bytes, whole samples). Default 500 ms of the call's format (24,000 at 24 kHz PCM16). */
  maxFrameBytes: number;
  /** Caller socket backlog above which assistant audio waits in the ring. Default 200 ms (9,600 at 24 kHz PCM16). */
  socketHighWaterBytes: number;
  /** Ring of assistant audio waiting for a slow caller. Default 200 ms (9,600 at 24 kHz PCM16). */
  pendingBytes: number;
  /** Largest chunk sent from the ring at once. Default 100 ms (4,800 at 24 kHz PCM16). */
  flushChunkBytes: number;
  /** At most this many mute/unmute toggles per second reach the provider; the rest are dropped and counted. */
  maxMuteTogglesPerSecond: number;
  /** Caller text frames longer than this are dropped unread. */
  maxTextFrameBytes: number;
}

export const RELAY_DEFAULTS: Readonly<RelayOptions> = Object.freeze({
  maxFrameBytes: 24_000,
  socketHighWaterBytes: 9_600,
  pendingBytes: 9_600,
  flushChunkBytes: 4_800,
  maxMuteTogglesPerSecond: 4,
  maxTextFrameBytes: 256,
});

/** What the pump needs of the call's audio format: sample size, rate, and the byte limits that follow from them. */
export interface PumpAudio {
  sampleBytes: 1 | 2;
  bytesPerMs: number;
  /** The byte-sized defaults, scaled to the format (the same durations as {@link RELAY_DEFAULTS} at 24 kHz PCM16). */
  defaults: Pick<RelayOptions, 'maxFrameBytes' | 'socketHighWaterBytes' | 'pendingBytes' | 'flushChunkBytes'>;
}

export function pumpAudioOf(audio: VoiceAudioFormat = DEFAULT_AUDIO_FORMAT): PumpAudio {
  const sampleBytes = bytesPerSample(audio);
  const perMs = bytesPerMs(audio);
  const bytes = (ms: number) => Math.round(ms * perMs);
  return {
    sampleBytes,
    bytesPerMs: perMs,
    defaults: {
      maxFrameBytes: bytes(500),
      socketHighWaterBytes: bytes(200),
      pendingBytes: bytes(200),
      flushChunkBytes: bytes(100),
    },
  };
}

/** Both directions of the call, as heard, for the recording (optional). Must copy what it keeps. */
export interface RelayTap {
  caller(audio: Uint8Array): void;
  assistant(audio: Uint8Array): void;
}

/** Counters of one relay (read any time; never reset). */
export interface RelayStats {
  callerFrames: number;
  callerBytes: number;
  /** Caller frames the provider link refused (not connected). */
  callerFramesRefusedByLink: number;
  /** Caller frames refused by the relay: too large or not whole samples. */
  callerFramesRefused: number;
  /** Caller text frames dropped (anything but mute/unmute, and toggles over the rate). */
  callerTextDropped: number;
  mutes: number;
  unmutes: number;
  assistantChunks: number;
  assistantBytes: number;
  /** Assistant audio withheld because the gate was closed. */
  assistantWithheldChunks: number;
  assistantWithheldBytes: number;
  /** Assistant audio the caller never got because it read too slowly (ring overwrite or socket limit). */
  assistantDroppedBytes: number;
  assistantSentBytes: number;
  /** Assistant captions withheld while the gate was closed. */
  transcriptsWithheld: number;
  /** Text events the caller socket refused (over its backpressure limit). */
  eventsDropped: number;
  /** Largest backlog seen on the caller socket (bytes). */
  maxSocketBuffered: number;
  /** Largest number of bytes seen waiting in the ring. */
  maxPending: number;
}

export function newStats(): RelayStats {
  return {
    callerFrames: 0,
    callerBytes: 0,
    callerFramesRefusedByLink: 0,
    callerFramesRefused: 0,
    callerTextDropped: 0,
    mutes: 0,
    unmutes: 0,
    assistantChunks: 0,
    assistantBytes: 0,
    assistantWithheldChunks: 0,
    assistantWithheldBytes: 0,
    assistantDroppedBytes: 0,
    assistantSentBytes: 0,
    transcriptsWithheld: 0,
    eventsDropped: 0,
    maxSocketBuffered: 0,
    maxPending: 0,
  };
}

/** Adds a closed relay's counters into running totals (the two high-water marks keep their maximum). */
export function addTotals(into: RelayStats, add: RelayStats): void {
  for (const key of Object.keys(into) as (keyof RelayStats)[]) {
    into[key] =
      key === 'maxSocketBuffered' || key === 'maxPending' ? Math.max(into[key], add[key]) : into[key] + add[key];
  }
}
