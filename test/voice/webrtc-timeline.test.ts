import t from 'tap';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { WebRtcCaller } from '../providers/voice/webrtc-caller.js';
import { endWithKey, live, mintWithKey, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from './helpers.js';
import { bearer } from '../helpers/identity.js';

const OWNERS = ['caller', 'relay', 'provider', 'platform', 'owner'];

/**
 * A WebRTC call's timeline: its audio never passes through Parley, so its turns are timed from the provider's
 * sideband, from the caller's end of speech (on the reflected audio's timeline) to the answer's first audio the
 * sideband reflects; the parts add up, each has an owner, and Parley's relay parts are nothing.
 */
t.test('a WebRTC call explains its turns from the sideband: parts that add up, owned', async (t) => {
  const sim = await startVoiceSimulator({ usageIntervalMs: 200, transcriptChunkMs: 100, wordMs: 40 });
  t.teardown(() => sim.close());
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER_URL: sim.url } });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const caller = new WebRtcCaller();
  t.teardown(() => caller.close());
  const minted = await mintWithKey(app, owner, assistant, { transport: { type: 'webrtc', sdp: await caller.offer() } });
  caller.answer((minted.transport as { sdp: string }).sdp);
  caller.talk(true);
  const session = live(app, minted.sessionId);
  let words = 0;
  session.subscribe({ onInputTranscript: () => void words++ });
  await waitFor(() => words >= 2, "the caller's words over the sideband", 15_000);
  caller.talk(false);
  await waitFor(() => caller.voicedPacketsIn > 0, 'the assistant heard over WebRTC', 15_000);

  const url = `${app.url}/api/v1/voice/sessions/${minted.sessionId}/timeline`;
  const timeline = await waitFor(async () => {
    const res = await fetch(url, { headers: bearer(owner.secret) });
    const body = (await res.json()) as any;
    return res.status === 200 && body.turns.length >= 1 ? body : undefined;
  }, 'the first turn in the live timeline');
  t.match(timeline, { sessionId: minted.sessionId, transport: 'webrtc', state: 'active' });
  const turn = timeline.turns[0];
  t.same(
    turn.parts.map((p: any) => p.name),
    ['caller_audio_held', 'provider_first_audio', 'grounding', 'tool', 'gate', 'answer_audio_held'],
    'the six parts, in order',
  );
  const sum = turn.parts.reduce((n: number, p: any) => n + p.ms, 0);
  t.ok(Math.abs(sum - turn.latencyMs) <= 5, `parts (${sum} ms) add up to the latency (${turn.latencyMs} ms)`);
  t.ok(
    turn.parts.every((p: any) => OWNERS.includes(p.owner) && p.ms >= 0),
    'every part has an owner and no negative time',
  );
  t.ok(turn.latencyMs > 0, 'the caller waited for the answer');
  const part = (name: string) => turn.parts.find((p: any) => p.name === name);
  t.equal(part('caller_audio_held').ms, 0, 'Parley holds none of the caller audio');
  t.ok(part('answer_audio_held').ms < 1, `nor any of the answer (${JSON.stringify(turn.parts)})`);
  t.ok(part('provider_first_audio').ms > 0, "the provider's part is the wait");
  const types = timeline.events.map((e: any) => e.type);
  t.ok(types.includes('turn_started') && types.includes('first_audio'), 'the turn is in the events');

  const ended = await endWithKey(app, owner, minted.sessionId);
  t.equal(ended.status, 200);
  const stored = await waitFor(async () => {
    const res = await fetch(url, { headers: bearer(owner.secret) });
    const body = (await res.json()) as any;
    return res.status === 200 && body.state !== 'active' ? body : undefined;
  }, 'the settled timeline');
  t.ok(stored.turns.length >= 1, 'the turns are kept with the settled call');
});
