import type { Assistant } from '../../assistants/index.js';
import type { VoiceSessionConfig } from '../../providers/voice/index.js';

/**
 * The owner's voice settings as the provider session takes them: the voice and its speed, and how turns are taken.
 * A setting left at null is left out, so the provider's own default applies. The first message is not the
 * provider's: the call says it (see {@link liveAssistantOf}), the same way with every provider.
 */
export function voiceShapeOf(
  voice: Assistant['settings']['voice'],
): Pick<VoiceSessionConfig, 'voice' | 'speed' | 'turnTaking'> {
  const turnTaking = {
    ...(voice.interruptAfterMs !== null ? { interruptAfterMs: voice.interruptAfterMs } : {}),
    ...(voice.endOfSpeechSilenceMs !== null ? { endOfSpeechSilenceMs: voice.endOfSpeechSilenceMs } : {}),
  };
  return {
    ...(voice.voiceName !== null ? { voice: voice.voiceName } : {}),
    ...(voice.speed !== 1 ? { speed: voice.speed } : {}),
    ...(Object.keys(turnTaking).length > 0 ? { turnTaking } : {}),
  };
}

/** What a live call keeps of its assistant: its ids for grounding, and the first message it says as the caller joins. */
export function liveAssistantOf(assistant: Assistant): { id: string; language: string; firstMessage: string | null } {
  return {
    id: assistant.id,
    language: assistant.settings.language,
    firstMessage: assistant.settings.voice.firstMessage || null,
  };
}
