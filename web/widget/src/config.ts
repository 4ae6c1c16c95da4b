import type { Operation, ParleyClient, SuccessBody } from '@parley/sdk';

/** What the widget shows and offers: the keyless config route's answer. */
export type WidgetConfig = SuccessBody<Operation<'/api/v1/widget/{publicId}/config', 'get'>>;
/** Who the widget calls the API as: a site visitor, or (in Parley's own dashboard) the signed-in owner. */
export type Source = 'widget' | 'playground';
export type Mode = 'chat' | 'voice' | 'both';

/**
 * The assistant's widget configuration. A site visitor reads it from the keyless config route; the playground reads
 * its assistant as the signed-in owner (the keyless route admits only the origins on the assistant's allowlist).
 */
export function fetchWidgetConfig(client: ParleyClient, source: Source, assistantId: string): Promise<WidgetConfig> {
  return source === 'playground'
    ? ownerConfig(client, assistantId)
    : client.GET('/api/v1/widget/{publicId}/config', { params: { path: { publicId: assistantId } } });
}

async function ownerConfig(client: ParleyClient, assistantId: string): Promise<WidgetConfig> {
  const { assistant: a } = await client.GET('/api/v1/assistants/{assistantId}', {
    params: { path: { assistantId } },
  });
  const { enabled, recording, requireConsent } = a.settings.voice;
  return {
    assistantId: a.publicId,
    name: a.name,
    welcomeMessage: a.welcomeMessage,
    // The owner's route does not say which transports the voice takes: both are offered, and a refused WebRTC mint
    // (400 VOICE_TRANSPORT_UNSUPPORTED, before anything starts) sends the call to the relay at once.
    voice: { enabled, recording, requireConsent, transports: ['webrtc', 'websocket'] },
    requireWidgetSigning: false,
  };
}
