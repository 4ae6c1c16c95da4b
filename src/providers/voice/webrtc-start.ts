import type { LiveCreateParams, LiveCreateResponse } from 'openai/resources/live/live';
import { VoiceProviderError, VoiceProviderErrorCodes as Codes, errorFromHttpStatus } from './errors.js';
import { buildSessionStart } from './protocol.js';
import { SidebandSession, type SidebandDeps } from './sideband-session.js';
import type { StartSessionOptions, VoiceSession, VoiceSessionConfig, VoiceWebRtcStart } from './types.js';

const CREATE_TIMEOUT_MS = 10_000;
const MAX_ERROR_BODY = 4096;

/**
 * Start a WebRTC session: `POST /v1/live/sessions` with the caller's offer and the data channel locked
 * (`client.data_channel.allowed_client_events: []`, nothing else differs from a primary session's start), then attach
 * the sideband and wait for `session.started` to echo the lock. The answer is handed out only after that: a provider
 * that does not echo the empty list is hung up and the start rejects VOICE_PROVIDER_UNCONFIRMED (a 502 at the mint).
 */
export async function startWebRtcSession(
  deps: SidebandDeps & { defaultModel: string },
  config: VoiceSessionConfig,
  offerSdp: string,
  options: StartSessionOptions = {},
): Promise<VoiceWebRtcStart> {
  // WebRTC negotiates its own media format: the start's audio.format is a primary-socket field, left out here.
  const { audio, ...session } = buildSessionStart(config, deps.defaultModel).session;
  const body: LiveCreateParams = {
    session: { ...session, ...(audio?.output !== undefined ? { audio: { output: audio.output } } : {}) },
    transport: { type: 'webrtc', sdp: offerSdp },
  };
  const signals = [AbortSignal.timeout(CREATE_TIMEOUT_MS), ...(options.signal ? [options.signal] : [])];
  let created: LiveCreateResponse;
  try {
    const res = await fetch(deps.httpBase, {
      method: 'POST',
      headers: { ...deps.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.any(signals),
    });
    const text = await res.text();
    if (!res.ok) throw errorFromHttpStatus(res.status, text.slice(0, MAX_ERROR_BODY));
    created = JSON.parse(text) as LiveCreateResponse;
  } catch (err) {
    if (err instanceof VoiceProviderError) throw err;
    if (options.signal?.aborted) throw new VoiceProviderError(Codes.ABORTED, 'The voice session start was aborted.');
    throw new VoiceProviderError(Codes.UNAVAILABLE, 'The voice provider could not be reached.', { cause: err });
  }
  const id = created?.session?.id;
  const answerSdp = created?.transport?.sdp;
  if (typeof id !== 'string' || id === '' || typeof answerSdp !== 'string' || answerSdp === '')
    throw new VoiceProviderError(Codes.UNAVAILABLE, 'The voice provider answered the offer without a session.');
  const sideband = new SidebandSession(deps, id, options.handlers ?? {}, options.logger);
  await sideband.attach(options.signal);
  return { session: sideband, answerSdp };
}

/**
 * Take over a WebRTC session another instance supervised (it died): attach the sideband anew and wait for
 * `session.started` echoing the lock for this very session. The provider replays its recent events after the attach
 * (deduplicated by event_id within this attach). Rejects when the provider refuses the attach or no longer knows the
 * session (the session is then hung up, as a sideband that cannot be re-attached is).
 */
export async function resumeWebRtcSession(
  deps: SidebandDeps,
  providerSessionId: string,
  options: StartSessionOptions = {},
): Promise<VoiceSession> {
  const sideband = new SidebandSession(deps, providerSessionId, options.handlers ?? {}, options.logger);
  await sideband.attach(options.signal);
  return sideband;
}
