import t from 'tap';
import { readWavHeader } from '../../../src/voice/index.js';
import { ANALYSIS, verifiedPayloads } from '../../analysis/helpers.js';
import { createOwner } from '../../helpers/identity.js';
import { api, startReceiver } from '../../webhooks/helpers.js';
import { endWithKey, mintWithKey, startVoiceApp, voiceAssistant, waitFor } from '../helpers.js';
import { mediaUrl, openMedia, speechFrames } from '../media-client.js';

/** The end-of-call report of a recorded call carries a signed recordingUrl that plays without credentials. */
t.test("a recorded call's end-of-call report links its recording", async (t) => {
  const app = await startVoiceApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['conversation.analyzed'],
  });
  const assistant = await voiceAssistant(app, owner, {
    voice: { recording: 'on', requireConsent: true },
    settings: { analysis: { ...ANALYSIS, for: ['voice'] } as never },
  });
  const minted = await mintWithKey(app, owner, assistant, { recordingConsent: true });
  const media = await openMedia(mediaUrl(app, minted));
  for (const frame of speechFrames(20)) media.send(frame);
  await waitFor(
    () => (app.app.voice.media!.relays.get(minted.sessionId)?.stats.callerFrames === 20 ? true : undefined),
    'the caller frames',
  );
  t.equal((await endWithKey(app, owner, minted.sessionId)).status, 200);

  await waitFor(() => receiver.received.length > 0, 'the conversation.analyzed webhook', 15_000);
  const [payload] = verifiedPayloads(receiver, endpoint.body.secret);
  const { recordingUrl, recordingUrlExpiresAt } = payload.data;
  t.match(recordingUrl, new RegExp(`/api/v1/recordings/${minted.sessionId}\\?expires=\\d+&signature=`));
  const lifetime = Date.parse(recordingUrlExpiresAt) - Date.now();
  t.ok(lifetime > 86_000_000 && lifetime <= 86_400_000, 'valid for RECORDING_URL_TTL_SECONDS (a day by default)');

  const url = new URL(recordingUrl);
  const played = await waitFor(async () => {
    const res = await fetch(`${app.url}${url.pathname}${url.search}`);
    if (res.status === 404) return void (await res.arrayBuffer());
    return res;
  }, 'the recording to be stored');
  t.equal(played!.status, 200, 'plays without credentials');
  t.match(readWavHeader(Buffer.from(await played!.arrayBuffer())), { channels: 2 });
});
