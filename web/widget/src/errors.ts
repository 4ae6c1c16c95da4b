import { ParleyError } from '@parley/sdk';
import { errorMessages } from './messages.js';
import type { View } from './view.js';

/**
 * A stable code and a neutral visitor message for anything that went wrong talking to Parley. Voice refusals of any
 * kind (widget 403 voice_unavailable, 429, provider 502) read the same: voice is not available right now.
 */
export function describeError(err: unknown, voice = false): [code: string, message: string] {
  if (!(err instanceof ParleyError) || err.status === 0) return ['NETWORK', errorMessages.network];
  const code = err.code || 'ERROR';
  if (code === 'WIDGET_ORIGIN_NOT_ALLOWED') return [code, errorMessages.originNotAllowed];
  if (code.startsWith('WIDGET_SIGNATURE')) return [code, errorMessages.signature];
  if (voice && (err.status === 403 || err.status === 429 || err.status >= 500))
    return ['VOICE_UNAVAILABLE', errorMessages.voiceUnavailable];
  if (err.status === 429) return [code, errorMessages.busy];
  if (err.status === 404) return [code, errorMessages.unavailable];
  return [code, err.status >= 500 ? errorMessages.unavailable : errorMessages.generic];
}

/**
 * A page whose origin the assistant does not allow: the text input, Send and the call button go off (nothing the
 * visitor does can help), and the console tells the site's owner what the server said: which origin to add to the
 * assistant's allowed domains. Returns true, the element's `refused`.
 */
export function disableControls(ui: View, err: unknown): true {
  for (const control of [ui.input, ui.send, ui.start]) control.disabled = true;
  const said = err instanceof Error && err.message ? err.message : '';
  console.error(`Parley: ${said || `add ${location.origin} to the assistant's allowed domains in the dashboard`}`);
  return true;
}
