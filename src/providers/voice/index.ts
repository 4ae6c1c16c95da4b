/** Public surface of the voice provider layer. Import from here, not from the files behind it. */
export type {
  StartSessionOptions,
  VoiceAdapterTuning,
  VoiceCloseReason,
  VoiceDelegationConfig,
  VoiceDelegationRequest,
  VoiceLinkState,
  VoiceProvider,
  VoiceSession,
  VoiceSessionClosed,
  VoiceSessionConfig,
  VoiceSessionHandlers,
  VoiceSessionStats,
  VoiceTranscriptDelta,
  VoiceUsage,
  VoiceWebRtcStart,
  VoiceTransportKind,
  VoiceFunctionTool,
  VoiceFunctionCall,
  VoiceBackendCommand,
} from './types.js';
export { transportsOf } from './types.js';
export { VoiceProviderError, VoiceProviderErrorCodes, type VoiceProviderErrorCode } from './errors.js';
export {
  createVoiceProvider,
  VOICE_ADAPTER_DEFAULTS,
  type GptLiveProviderOptions,
  type SimulatorProviderOptions,
  type VoiceProviderOptions,
} from './provider.js';
export {
  DEFAULT_AUDIO_FORMAT,
  bytesPerMs,
  bytesPerSample,
  silenceByte,
  wavFormatOf,
  type VoiceAudioEncoding,
  type VoiceAudioFormat,
} from './audio-format.js';
export { MULAW_TO_LINEAR, ALAW_TO_LINEAR, linearToMulaw, linearToAlaw } from './g711.js';
export {
  RelayResidence,
  ResidenceHistogram,
  RESIDENCE_BUCKETS,
  quantileOf,
  residenceNow,
  type ResidenceDirection,
} from './residence.js';
export { ManualClock, systemClock, type VoiceClock } from './clock.js';
export { startVoiceSimulator, type VoiceSimulator, type VoiceSimulatorOptions } from './simulator/server.js';
export type { SimulatedSessionRecord, SimulatedTranscript, VoiceSimulatorStats } from './simulator/types.js';
export { parseFaults, type SimulatorFaults } from './simulator/faults.js';
export { simulatedWords } from './simulator/media.js';
export { createLocalVoiceProvider, type LocalProviderOptions } from './local/provider.js';
export { findLocalVoiceEngines, type LocalVoiceEngines } from './local/engines.js';
export { synthesizeSpeech } from './local/speaker.js';
export { transcribeCallAudio } from './local/transcribe.js';
export { LOCAL_VOICE_DEFAULTS, type LocalVoiceTuning } from './local/vad.js';
export type { LocalVoiceSession } from './local/session.js';
