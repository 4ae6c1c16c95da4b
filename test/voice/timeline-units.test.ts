import t from 'tap';
import { CallTimeline, TIMELINE_HEAD_TURNS, TIMELINE_TAIL_TURNS } from '../../src/voice/timeline/call-timeline.js';
import { faultOf } from '../../src/voice/timeline/present.js';

/**
 * The turn clock on a clock the test moves: each part is the span it names, the parts add up, grounding is cut out
 * of wherever it fell, and a long call keeps its first and last turns.
 */

function timelineAt() {
  const clock = { now: 1000 };
  const seen: Array<[number, number]> = [];
  const timeline = new CallTimeline('websocket', () => clock.now, 0, { turn: (l, f) => void seen.push([l, f]) });
  timeline.turnClock.bytesPerMs = 48;
  return { clock, timeline, seen };
}

/** 20 ms caller frames from `fromMs` (audio time) read at the clock's current time, then sent `heldMs` later. */
function frames(c: ReturnType<typeof timelineAt>, count: number, heldMs: number) {
  for (let i = 0; i < count; i++) {
    c.clock.now += 20;
    c.timeline.turnClock.callerAudio(960);
  }
  c.clock.now += heldMs;
  c.timeline.turnClock.audioSent(960 * count);
}

t.test('a plain turn: held audio, the provider, the gate, the write', async (t) => {
  const c = timelineAt();
  frames(c, 10, 60); // 200 ms of speech read by t=1200, sent at 1260
  const clock = c.timeline.turnClock;
  c.clock.now = 1300;
  clock.callerSpeech(200); // the provider heard speech until 200 ms of audio
  c.clock.now = 1700;
  clock.providerAudio(false); // the answer's first audio, gate closed
  c.clock.now = 1750;
  clock.providerAudio(true); // the gate opened
  c.clock.now = 1752;
  clock.assistantAudioWritten();
  const [turn] = c.timeline.snapshot().turns;
  t.same(
    turn!.parts.map((p) => [p.name, p.ms, p.owner]),
    [
      ['caller_audio_held', 60, 'relay'],
      ['provider_first_audio', 440, 'provider'],
      ['grounding', 0, 'platform'],
      ['tool', 0, 'owner'],
      ['gate', 50, 'relay'],
      ['answer_audio_held', 2, 'relay'],
    ],
  );
  t.equal(turn!.latencyMs, 552);
  t.equal(turn!.userStoppedAtMs, 200, 'the frame that ends the speech was read 200 ms after the mint');
  t.same(c.seen, [[552, 440]], 'metrics got the turn once');
  clock.assistantAudioWritten();
  t.equal(c.timeline.snapshot().turns.length, 1, 'more answer audio is the same turn');
});

t.test('an answer the provider plays itself (WebRTC): nothing is held after the gate', async (t) => {
  const c = timelineAt();
  const clock = c.timeline.turnClock;
  c.clock.now = 1300;
  clock.callerSpeech(200);
  c.clock.now = 1700;
  clock.providerAudio(true); // the sideband's copy of the answer's first audio, the gate open
  c.clock.now = 1706; // Parley's own work on the copy (its listeners, the recorder)
  clock.assistantAudioPlayedByProvider();
  const [turn] = c.timeline.snapshot().turns;
  t.equal(turn!.parts.find((p) => p.name === 'answer_audio_held')?.ms, 0, "Parley's work on the copy is no wait");
  t.equal(turn!.firstAudioAtMs, 700, 'the turn ends at the audio the gate let through');
});

t.test('grounding is cut out of the provider wait and the gate hold it overlapped', async (t) => {
  const c = timelineAt();
  frames(c, 10, 0);
  const clock = c.timeline.turnClock;
  clock.callerSpeech(200);
  c.clock.now = 1500;
  clock.groundingStarted(); // the model delegated the question
  c.clock.now = 1600;
  clock.providerAudio(false); // an acknowledgement, withheld
  c.clock.now = 1900;
  clock.groundingEnded(); // the answer was handed over
  c.clock.now = 1950;
  clock.providerAudio(true);
  clock.assistantAudioWritten();
  const [turn] = c.timeline.snapshot().turns;
  const parts = Object.fromEntries(turn!.parts.map((p) => [p.name, p.ms]));
  t.same(parts, {
    caller_audio_held: 0,
    provider_first_audio: 300, // 1200 -> 1600, less the 100 ms of grounding inside it
    grounding: 400, // 1500 -> 1900
    tool: 0,
    gate: 50, // 1600 -> 1950, less the 300 ms of grounding inside it
    answer_audio_held: 0,
  });
  t.equal(
    turn!.parts.reduce((n, p) => n + p.ms, 0),
    turn!.latencyMs,
  );
});

t.test(
  "an owner tool the first audio waited for is the owner's part; one its start message spoke over is not",
  async (t) => {
    const c = timelineAt();
    frames(c, 10, 0);
    const clock = c.timeline.turnClock;
    clock.callerSpeech(200); // speech ended at 1200
    c.clock.now = 1300;
    clock.toolStarted(); // the backend called a tool
    c.clock.now = 1800;
    clock.toolEnded(); // its server answered after 500 ms
    c.clock.now = 1900;
    clock.providerAudio(true); // the answer's first audio came after it
    clock.assistantAudioWritten();
    let parts = Object.fromEntries(c.timeline.snapshot().turns[0]!.parts.map((p) => [p.name, [p.ms, p.owner]]));
    t.same(parts.tool, [500, 'owner'], "the caller waited on the owner's server");
    t.same(parts.provider_first_audio, [200, 'provider'], 'the rest of the wait is the provider');

    frames(c, 10, 0);
    clock.callerSpeech(400);
    clock.toolStarted();
    c.clock.now += 100;
    clock.providerAudio(true); // the start message, spoken while the tool runs
    clock.assistantAudioWritten();
    clock.toolEnded();
    parts = Object.fromEntries(c.timeline.snapshot().turns[1]!.parts.map((p) => [p.name, [p.ms, p.owner]]));
    t.same(parts.tool, [0, 'owner'], 'the start message ended the silence');
  },
);

t.test('a long call keeps its first and last turns and counts the middle', async (t) => {
  const c = timelineAt();
  const clock = c.timeline.turnClock;
  const total = TIMELINE_HEAD_TURNS + TIMELINE_TAIL_TURNS + 25;
  for (let i = 0; i < total; i++) {
    frames(c, 5, 0);
    clock.callerSpeech((i + 1) * 100);
    c.clock.now += 300;
    clock.providerAudio(true);
    clock.assistantAudioWritten();
  }
  const snap = c.timeline.snapshot();
  t.equal(snap.turns.length, TIMELINE_HEAD_TURNS + TIMELINE_TAIL_TURNS);
  t.equal(snap.turnsOmitted, 25);
  t.equal(snap.turns[0]!.index, 1);
  t.equal(snap.turns.at(-1)!.index, total);
  t.ok(
    snap.turns.every((turn, i) => i === 0 || turn.index > snap.turns[i - 1]!.index),
    'in order',
  );
  t.equal(c.seen.length, total, 'every turn reached the metrics');
});

t.test('faults by end reason', async (t) => {
  t.equal(faultOf(null, 'client', 'ended', []), null);
  t.equal(faultOf('idle', 'service', 'ended', []), 'caller');
  t.equal(faultOf('usage_limit', 'service', 'ended', []), 'budget');
  t.equal(faultOf('control_lost', 'service', 'ended', [{ atMs: 1, type: 'provider_lost' }]), 'provider');
  t.equal(faultOf('control_lost', 'service', 'ended', []), 'platform');
  t.equal(faultOf('control_lost', 'reaper', 'lost', []), 'platform');
  t.equal(faultOf('shutdown', 'service', 'ended', []), 'platform');
});
