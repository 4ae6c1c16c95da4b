import type { AssistantSettings } from '../api/client.js';

type Voice = AssistantSettings['voice'];

/** Voices offered in the picker; any other name the provider knows may be typed. */
const LOCAL_VOICES = ['en-us', 'en-gb', 'en-us+f3', 'en-gb+f3', 'en-us+m3', 'de', 'fr', 'es', 'it', 'nl'];
const HOSTED_VOICES = ['marin', 'cedar', 'alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse'];

const optionalNumber = (text: string): number | null => (text.trim() === '' ? null : Number(text));

/**
 * How the assistant sounds and takes turns in a call: its first message, its voice and speed, how long the caller
 * must speak to cut it off, and the silence that ends the caller's turn. Blank means the provider's default.
 */
export function VoiceShapeFields({ voice, onChange }: { voice: Voice; onChange: (voice: Voice) => void }) {
  const set = (patch: Partial<Voice>) => onChange({ ...voice, ...patch });
  return (
    <fieldset class="voice-shape">
      <legend>How it sounds</legend>
      <label>
        First message <span class="muted">(said as the caller connects; blank: it waits for the caller)</span>
        <textarea
          rows={2}
          maxLength={500}
          value={voice.firstMessage ?? ''}
          onInput={(e) => set({ firstMessage: e.currentTarget.value.trim() === '' ? null : e.currentTarget.value })}
        />
      </label>
      <div class="row">
        <label>
          Voice <span class="muted">(blank: the provider's default)</span>
          <input
            list="voice-names"
            maxLength={40}
            value={voice.voiceName ?? ''}
            onInput={(e) =>
              set({ voiceName: e.currentTarget.value.trim() === '' ? null : e.currentTarget.value.trim() })
            }
          />
          <datalist id="voice-names">
            {LOCAL_VOICES.map((v) => (
              <option value={v}>local voice</option>
            ))}
            {HOSTED_VOICES.map((v) => (
              <option value={v}>hosted voice</option>
            ))}
          </datalist>
        </label>
        <label>
          Speed <span class="muted">(local voice; 1 = normal)</span>
          <input
            type="number"
            min={0.5}
            max={2}
            step={0.05}
            value={voice.speed}
            onInput={(e) => set({ speed: Number(e.currentTarget.value) })}
          />
        </label>
      </div>
      <div class="row">
        <label>
          Interruption: caller speech that cuts the assistant off (ms) <span class="muted">(blank: 60)</span>
          <input
            type="number"
            min={20}
            max={2000}
            inputMode="numeric"
            value={voice.interruptAfterMs ?? ''}
            onInput={(e) => set({ interruptAfterMs: optionalNumber(e.currentTarget.value) })}
          />
        </label>
        <label>
          End-of-speech silence (ms) <span class="muted">(blank: 600)</span>
          <input
            type="number"
            min={200}
            max={3000}
            inputMode="numeric"
            value={voice.endOfSpeechSilenceMs ?? ''}
            onInput={(e) => set({ endOfSpeechSilenceMs: optionalNumber(e.currentTarget.value) })}
          />
        </label>
      </div>
    </fieldset>
  );
}
