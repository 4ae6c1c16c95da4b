/** The voice client (@parley/sdk/voice): VoiceCall, its types, and PCM helpers. Browser-safe. */
export { VoiceCall } from './call.js';
export { WebRtcUnavailableError, webRtcSupported } from './webrtc-media.js';
export {
  FRAME_BYTES,
  FRAME_MS,
  BYTES_PER_MS,
  BYTES_PER_SECOND,
  SAMPLE_RATE_HZ,
  pcmFromWav,
  wavHeader,
  syntheticSpeech,
  tone,
  type WavFormat,
} from './pcm.js';
export {
  DEFAULT_AUDIO,
  bytesPerMsOf,
  bytesPerSampleOf,
  parseAudioFormat,
  fromPcm16,
  toPcm16,
  linearToMulaw,
  linearToAlaw,
  type AudioFormat,
} from './formats.js';
export type * from './types.js';
