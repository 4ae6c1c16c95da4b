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

/** What a mint may carry for the first message: an outbound call's `variables` (POST /api/v1/calls). */
export interface FirstMessageVariables {
  /** Internal: `{{name}}` in the first message is said as this value (an unknown name as nothing). */
  variables?: Readonly<Record<string, string>> | undefined;
}

/**
 * What a live call keeps of its assistant: its ids for grounding, and the first message it says as the caller joins
 * (with an outbound call's variables filled in; a call without variables says it as written).
 */
export function liveAssistantOf(
  assistant: Assistant,
  variables?: FirstMessageVariables['variables'],
): { id: string; language: string; firstMessage: string | null } {
  const written = assistant.settings.voice.firstMessage || null;
  return {
    id: assistant.id,
    language: assistant.settings.language,
    firstMessage: written === null || variables === undefined ? written : fillVariables(written, variables),
  };
}

/** `{{ name }}` replaced by its value; a name without one by nothing. */
export function fillVariables(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_, name: string) =>
    Object.hasOwn(variables, name) ? (variables[name] ?? '') : '',
  );
}
