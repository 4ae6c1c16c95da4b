import type { Test } from 'tap';
import type { VoiceAudioFormat } from '../../src/providers/voice/index.js';
import { loadPronunciations } from '../../src/providers/voice/local/engines.js';
import { prepareSessionModel, recognizeUtterance } from '../../src/providers/voice/local/recognizer.js';
import {
  callAudioToWav,
  framesOf,
  localEngines,
  silence,
  spoken,
  wavSamples,
} from '../providers/voice/local-helpers.js';
import { mediaUrl, openMedia, type MediaClient } from '../voice/media-client.js';
import { mintWithKey, ownerWithVoice, voiceAssistant } from '../voice/helpers.js';
import type { TestApp } from '../helpers/app.js';
import { api, orderStatusTool } from './helpers.js';

/** The call's audio: PCM16 at 24 kHz, what the media socket carries by default. */
export const CALL_AUDIO: VoiceAudioFormat = { format: 'pcm16', sampleRateHz: 24000 };

/** What one side of the call said so far, from the transcript events of the media socket. */
export function said(media: MediaClient, role: 'user' | 'assistant'): string {
  return media
    .texts('transcript')
    .filter((e) => e.role === role)
    .map((e) => e.text as string)
    .join(' ');
}

/**
 * An owner whose assistant has the order_status tool (examples: "status of order {orderId}") at `receiverUrl`, on a
 * local-voice call whose caller asks aloud "What is the status of order 1 2 3 4 5" (espeak-ng, the number read out
 * digit by digit), then pauses. Returns what the test needs to follow the call.
 */
export async function askOrderStatusAloud(
  t: Test,
  app: TestApp,
  receiverUrl: string,
  tool: Parameters<typeof orderStatusTool>[1] = {},
) {
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const created = await api(
    app.url,
    'POST',
    `/api/v1/assistants/${assistant.publicId}/tools`,
    owner.secret,
    orderStatusTool(receiverUrl, tool),
  );
  t.equal(created.status, 201, created.text);
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  t.teardown(() => media.ws.close());
  const question = framesOf(spoken('What is the status of order 1 2 3 4 5', CALL_AUDIO), CALL_AUDIO);
  for (const frame of [...silence(200, CALL_AUDIO), ...question, ...silence(1000, CALL_AUDIO)]) media.send(frame);
  return { owner, assistant, secret: created.body.secret as string, minted, media };
}

/**
 * Every byte of assistant audio Parley sent on the media socket, recognized back with the local recognizer (its
 * language model made of `expected`): proves the words are in the audio, not only in the captions.
 */
export async function recognizedAudio(t: Test, media: MediaClient, expected: string): Promise<string> {
  const engines = localEngines();
  const sent = Buffer.concat(media.events.filter((e) => e.kind === 'binary').map((e) => e.data));
  const model = await prepareSessionModel(expected, await loadPronunciations(engines.dictionary));
  t.teardown(() => model.dispose());
  const words = await recognizeUtterance(wavSamples(callAudioToWav(sent, CALL_AUDIO)), {
    engines,
    model,
    signal: new AbortController().signal,
  });
  return words.map((w) => w.word).join(' ');
}
