import type { MintRequest, VoiceCallOptions } from './types.js';

/**
 * The end request for page unload (pagehide / beforeunload): fetch with `keepalive`, so it outlives the page. Fired,
 * never awaited.
 */
export function sendEndOnUnload(options: VoiceCallOptions, sessionId: string): void {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.apiKey !== undefined) headers['authorization'] = `Bearer ${options.apiKey}`;
  else if (options.signature !== undefined) headers['x-parley-signature'] = options.signature;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/api/v1/voice/sessions/${encodeURIComponent(sessionId)}/end`;
  const doFetch = options.fetch ?? globalThis.fetch;
  void doFetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify(options.visitorId !== undefined ? { visitorId: options.visitorId } : {}),
    keepalive: true,
  }).catch(() => undefined);
}

/** The mint's body from the call's options (capabilities default to heartbeat and playback_gate). */
export function mintBodyOf(o: VoiceCallOptions): MintRequest {
  return {
    assistantId: o.assistantId,
    capabilities: o.capabilities ?? ['heartbeat', 'playback_gate'],
    ...(o.recordingConsent !== undefined ? { recordingConsent: o.recordingConsent } : {}),
    ...(o.visitorId !== undefined ? { visitorId: o.visitorId } : {}),
    ...(o.conversationId !== undefined ? { conversationId: o.conversationId } : {}),
    ...(o.source !== undefined ? { source: o.source } : {}),
    ...(o.audio !== undefined ? { audio: o.audio } : {}),
  };
}
