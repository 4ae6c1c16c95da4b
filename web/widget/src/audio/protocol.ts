/**
 * Messages between the widget and its two AudioWorklet processors (web/widget/src/audio/worklets.ts). The
 * processors live in their own file, /widget/v1/parley-audio.js, loaded with audioWorklet.addModule from the
 * script's own origin, so a site's CSP needs no blob: or data: sources.
 */
export const CAPTURE_PROCESSOR = 'parley-capture';
export const PLAYBACK_PROCESSOR = 'parley-playback';

/** Parley's media format: PCM16LE mono at 24 kHz; one caller frame is 20 ms (480 samples, 960 bytes). */
export const MEDIA_RATE = 24_000;
export const FRAME_SAMPLES = 480;

/** Capture -> widget: one 20 ms frame of PCM16 at 24 kHz (its buffer is transferred). */
export interface CaptureFrame {
  type: 'frame';
  pcm: Int16Array;
}

/** Widget -> playback: assistant audio (PCM16LE 24 kHz bytes), or drop everything queued (the gate closed). */
export type PlaybackCommand = { type: 'audio'; pcm: ArrayBuffer } | { type: 'flush' };

/** Playback -> widget, about every 100 ms while anything plays: the level it produced and what it holds. */
export interface PlaybackLevel {
  type: 'level';
  /** RMS of the samples it wrote in the last period (0..1). */
  rms: number;
  /** Milliseconds of assistant audio waiting in the jitter buffer. */
  bufferedMs: number;
  underruns: number;
}
