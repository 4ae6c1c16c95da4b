import type { Logger } from '../../../log/index.js';
import { VoiceProviderError, VoiceProviderErrorCodes } from '../errors.js';
import type { StartSessionOptions, VoiceProvider, VoiceSession, VoiceSessionConfig } from '../types.js';
import { loadPronunciations, type LocalVoiceEngines } from './engines.js';
import { ProcessLimiter, prepareSessionModel } from './recognizer.js';
import { LocalVoiceSession } from './session.js';
import { LocalVoiceTools } from './tools.js';
import { LOCAL_VOICE_DEFAULTS, type LocalVoiceTuning } from './vad.js';

/** Options for the local provider: offline recognition and synthesis on this machine. */
export interface LocalProviderOptions extends LocalVoiceTuning {
  kind: 'local';
  /** From findLocalVoiceEngines. */
  engines: LocalVoiceEngines;
  logger?: Logger;
}

/** Bytes of hint text (the assistant's documents) a session's language model is built from. */
export const MAX_HINT_CHARS = 200_000;

/**
 * The local provider: no account, no network. Each session gets a small language model of what its callers are
 * likely to say (`speechHints`, the assistant's documents); the recognizer runs once per utterance, bounded across
 * the instance; answers come back as delegations Parley grounds, and are spoken by the synthesizer.
 */
export function createLocalVoiceProvider(options: LocalProviderOptions): VoiceProvider & { kind: 'local' } {
  const tuning: Required<LocalVoiceTuning> = { ...LOCAL_VOICE_DEFAULTS };
  for (const key of Object.keys(LOCAL_VOICE_DEFAULTS) as Array<keyof LocalVoiceTuning>) {
    const value = options[key];
    if (value !== undefined) {
      if (!Number.isFinite(value) || value < 0) throw new RangeError(`${key} must be 0 or more.`);
      tuning[key] = value;
    }
  }
  const limiter = new ProcessLimiter(tuning.maxConcurrentRecognitions, tuning.maxWaitingRecognitions);
  const deps = Object.freeze({ engines: options.engines, limiter, tuning, logger: options.logger });
  return Object.freeze({
    kind: 'local' as const,
    // The local engines hear audio Parley relays; a browser's peer connection has nobody to talk to here. Declared,
    // so the widget's config says so and a WebRTC mint is refused up front; these two are never reached through it.
    transports: ['websocket'] as const,
    startWebRtcSession(): Promise<never> {
      return Promise.reject(
        new VoiceProviderError(
          VoiceProviderErrorCodes.REFUSED,
          'The local voice takes relayed calls only, not WebRTC.',
        ),
      );
    },
    resumeWebRtcSession(): Promise<never> {
      return Promise.reject(
        new VoiceProviderError(VoiceProviderErrorCodes.REFUSED, 'The local voice holds no WebRTC sessions.'),
      );
    },
    async startSession(config: VoiceSessionConfig, start: StartSessionOptions = {}): Promise<VoiceSession> {
      const aborted = (): VoiceProviderError =>
        new VoiceProviderError(VoiceProviderErrorCodes.ABORTED, 'The voice session start was aborted.');
      if (start.signal?.aborted) throw aborted();
      let model;
      try {
        const words = await loadPronunciations(options.engines.dictionary);
        // What callers say to the owner's tools is heard as well as what the documents talk about.
        const hints = `${new LocalVoiceTools(config.tools).speechHints()}\n${config.speechHints ?? ''}`;
        model = await prepareSessionModel(hints.slice(0, MAX_HINT_CHARS), words);
      } catch (err) {
        throw new VoiceProviderError(VoiceProviderErrorCodes.UNAVAILABLE, 'The local recognizer could not start.', {
          cause: err,
        });
      }
      if (start.signal?.aborted) {
        await model.dispose();
        throw aborted();
      }
      const session = new LocalVoiceSession(deps, config, model, start.handlers, start.logger ?? options.logger);
      start.handlers?.onStateChange?.('connected');
      return session;
    },
  });
}
