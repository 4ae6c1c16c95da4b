import t from 'tap';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import {
  addNumber,
  callParams,
  callWebhook,
  mulawSilence,
  mulawSpeech,
  openCarrierStream,
  streamOfTwiml,
} from './carrier.js';

/**
 * Barge-in on a phone call, as the carrier sees it: the caller talks over the assistant, Parley sends `clear` on the
 * media stream and what was still queued of that answer never reaches the phone. The provider simulator answers
 * each utterance with 1.8 s of speech delivered at twice real time (as providers run ahead of playback) and stops
 * speaking when it hears the caller ([sim:barge-in], as a provider's own voice detection does); the simulated phone
 * plays at real time, echoing marks as it goes: when the caller barges in there is unplayed audio at the phone.
 */

t.test('the caller talks over the assistant: clear at once, and no more of that answer', async (t) => {
  const sim = await startVoiceSimulator({ transcriptChunkMs: 100, wordMs: 600, outputFrameIntervalMs: 10 });
  t.teardown(() => sim.close());
  const app = await startTestApp(t, { env: { VOICE_PROVIDER_URL: sim.url } });
  const owner = await createOwner(app.database.sql);
  const number = await addNumber(
    app,
    owner,
    await voiceAssistant(app, owner, { instructions: 'Be brief. [sim:barge-in]' }),
  );
  const answer = await callWebhook(app, callParams(number.phoneNumber));
  const stream = streamOfTwiml(answer.text)!;
  const carrier = await openCarrierStream(stream.url, stream.token, { playback: 'realtime' });

  // The caller's line: a 20 ms frame every 20 ms, speech or silence as the test says.
  let talking = true;
  const speech = mulawSpeech(1)[0]!;
  const silence = mulawSilence(1)[0]!;
  const line = setInterval(() => carrier.media(talking ? speech : silence), 20);
  t.teardown(() => clearInterval(line));
  const events: { kind: 'media' | 'clear'; at: number }[] = [];
  carrier.stream.onMedia = (_audio, at) => events.push({ kind: 'media', at });
  carrier.stream.onClear = (at) => events.push({ kind: 'clear', at });

  // A question (0.6 s), then silence until the assistant starts answering.
  await new Promise((r) => setTimeout(r, 600));
  talking = false;
  await waitFor(() => events.some((e) => e.kind === 'media'), 'the assistant to start answering');

  // The caller talks over it.
  talking = true;
  const bargedAt = performance.now();
  await waitFor(() => events.some((e) => e.kind === 'clear'), 'a clear on the stream');
  const clearAt = events.find((e) => e.kind === 'clear')!.at;
  t.ok(clearAt > bargedAt, 'the clear came after the caller started talking over the assistant');
  t.ok(
    events.some((e) => e.kind === 'media' && e.at < clearAt),
    'while the assistant was speaking (its audio had arrived)',
  );
  t.ok(carrier.stream.clearedBytes > 0, `the phone dropped ${carrier.stream.clearedBytes / 8} ms it had queued`);

  // The caller goes on for 2.5 s: longer than the rest of the answer takes the provider to send.
  await new Promise((r) => setTimeout(r, 2500));
  const afterClear = events.filter((e) => e.kind === 'media' && e.at > clearAt);
  t.same(afterClear.length, 0, 'no more of the interrupted answer reached the phone');
  t.equal(carrier.clears(), 1, 'one clear for one interruption');

  // The caller stops: the next answer is heard, so the line itself still works.
  talking = false;
  await waitFor(
    () => events.some((e) => e.kind === 'media' && e.at > clearAt),
    'the answer to what the caller said over it',
  );
  carrier.send({ event: 'stop', streamSid: carrier.stream.streamSid });
  await carrier.closed;
  await waitFor(async () => {
    const rows = await app.database.sql`
      select 1 from voice_sessions where id = ${stream.sessionId} and state = 'ended'`;
    return rows.length > 0;
  }, 'the call to be settled');
  t.ok(app.logs.text().includes('phone media stream closed'), 'the stream closed after the caller hung up');
});
