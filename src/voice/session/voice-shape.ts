import type { Assistant } from '../../assistants/index.js';
import type { VoiceSessionConfig } from '../../providers/voice/index.js';

/**
 * The owner's voice settings as the provider session takes them: the first message, the voice and its speed, and
 * how turns are taken. A setting left at null is left out, so the provider's own default applies.
 */
export function voiceShapeOf(
  voice: Assistant['settings']['voice'],
): Pick<VoiceSessionConfig, 'firstMessage' | 'voice' | 'speed' | 'turnTaking'> {
  const turnTaking = {
    ...(voice.interruptAfterMs !== null ? { interruptAfterMs: voice.interruptAfterMs } : {}),
    ...(voice.endOfSpeechSilenceMs !== null ? { endOfSpeechSilenceMs: voice.endOfSpeechSilenceMs } : {}),
  };
  return {
    ...(voice.firstMessage ? { firstMessage: voice.firstMessage } : {}),
    ...(voice.voiceName !== null ? { voice: voice.voiceName } : {}),
    ...(voice.speed !== 1 ? { speed: voice.speed } : {}),
    ...(Object.keys(turnTaking).length > 0 ? { turnTaking } : {}),
  };
}
