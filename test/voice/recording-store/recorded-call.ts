import type { AssistantSettingsPatch } from '../../../src/assistants/settings.js';
import type { TestOwner } from '../../helpers/identity.js';
import { endWithKey, mintWithKey, ownerWithVoice, voiceAssistant, waitFor, type VoiceTestApp } from '../helpers.js';
import { mediaUrl, openMedia, speechFrames } from '../media-client.js';

/**
 * The setup the recordings tests share: an owner, an assistant that records (consent required), one call with consent
 * whose caller sends `frames` frames of speech, ended by the owner. With `stored`, it waits until the recording is in
 * the store.
 */
export async function recordedCall(
  app: VoiceTestApp,
  options: {
    owner?: TestOwner;
    assistant?: Awaited<ReturnType<typeof voiceAssistant>>;
    voice?: AssistantSettingsPatch['voice'];
    frames?: number;
    stored?: boolean;
    extra?: Record<string, unknown>;
  } = {},
) {
  const owner = options.owner ?? (await ownerWithVoice(app));
  const assistant =
    options.assistant ??
    (await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: true, ...options.voice } }));
  const minted = await mintWithKey(app, owner, assistant, { recordingConsent: true, ...options.extra });
  const media = await openMedia(mediaUrl(app, minted));
  const frames = options.frames ?? 20;
  for (const frame of speechFrames(frames)) media.send(frame);
  await waitFor(
    () => (app.app.voice.media!.relays.get(minted.sessionId)?.stats.callerFrames === frames ? true : undefined),
    'the caller frames',
  );
  await endWithKey(app, owner, minted.sessionId);
  await media.closed;
  if (options.stored) {
    await waitFor(
      async () => ((await app.app.voice.recordings!.exists(minted.sessionId)) ? true : undefined),
      'the recording',
    );
  }
  return { owner, assistant, minted };
}

/** RECORDINGS_STORE=s3 against a test bucket server (s3rver accepts any key pair), objects under `calls/`. */
export const s3Env = (endpoint: string, bucket: string) => ({
  RECORDINGS_STORE: 's3',
  S3_ENDPOINT: endpoint,
  S3_BUCKET: bucket,
  S3_PREFIX: 'calls/',
  S3_FORCE_PATH_STYLE: 'true',
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
});
