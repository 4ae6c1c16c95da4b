/**
 * The entry of /widget/v1/parley.js: remembers where the script came from (the default `server`, and the origin of
 * the audio worklet module) and defines <parley-assistant>. Loading the script twice is harmless.
 */
import { ParleyAssistant, scriptBase } from './element.js';

declare const __PARLEY_AUDIO_VERSION__: string;

const script =
  (document.currentScript as HTMLScriptElement | null) ??
  document.querySelector<HTMLScriptElement>('script[src*="/widget/v1/parley.js"]');
if (script?.src) {
  const url = new URL(script.src, location.href);
  scriptBase.origin = url.origin;
  scriptBase.audioUrl = new URL(`parley-audio.js?v=${__PARLEY_AUDIO_VERSION__}`, url).href;
}
if (customElements.get('parley-assistant') === undefined) customElements.define('parley-assistant', ParleyAssistant);
